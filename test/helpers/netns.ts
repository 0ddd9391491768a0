/**
 * An isolated Linux network namespace for tests: the disconnected side of an air gap on one machine.
 *
 * `createIsolatedNamespace()` makes a namespace joined to this one by a veth pair on a /30 of
 * 10.231.0.0/16, with loopback up inside and no default route. From inside, the only address that
 * answers is the host side of the pair (`hostIp`): a server the test binds there is reachable, and
 * nothing else of this machine is (its 127.0.0.1 is the namespace's own loopback). Commands run
 * inside with `ip netns exec`.
 *
 * Names carry the owning pid (`airgap-<pid>-<n>`, links `ag<pid>h<n>`/`ag<pid>n<n>`), so parallel
 * vitest workers never collide, and namespaces left by dead test processes are removed before a new
 * one is made. Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); `netnsUnavailable()` says why not.
 */
import { execFileSync } from 'node:child_process';
import { execa, type Options, type ResultPromise } from 'execa';
import { processAlive } from '../../src/util/lock.js';

export interface IsolatedNamespace {
  /** The namespace's name, for `ip netns exec <name>`. */
  name: string;
  /** The host side of the veth pair: the one address reachable from inside. */
  hostIp: string;
  /** The namespace side of the veth pair. */
  nsIp: string;
  /** The host-side interface (in this namespace). */
  hostIf: string;
  /** Run `cmd args` inside the namespace (`ip netns exec <name> cmd args`), with execa. */
  exec<O extends Options = Options>(cmd: string, args?: readonly string[], opts?: O): ResultPromise<O>;
  /** Delete the namespace and the veth pair. Idempotent. */
  close(): Promise<void>;
}

const NS_PREFIX = 'airgap-';
const NS_RE = /^airgap-(\d+)-/;
const LINK_RE = /^ag(\d+)[hn]\d+$/;
/** /30 subnets of 10.231.0.0/16. */
const SUBNETS = 16_384;

const live = new Map<string, string>(); // namespace name → host-side interface
let counter = 0;
let hooked = false;

function ip(args: string[]): Promise<unknown> {
  return execa('ip', args, { stdin: 'ignore', timeout: 10_000 });
}

/** `ip` quietly, for cleanup: errors (already gone) are ignored. */
function ipSyncQuiet(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore', timeout: 10_000 });
  } catch {
    // already gone
  }
}

/**
 * On exit, delete what this process made; once per process, delete what dead processes left
 * (a worker ended by SIGKILL never runs its 'exit' handlers).
 */
function installHooks(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const [name, hostIf] of live) {
      ipSyncQuiet(['netns', 'delete', name]);
      ipSyncQuiet(['link', 'delete', hostIf]);
    }
    live.clear();
  });
  sweepStale();
}

function ownerDead(pid: number): boolean {
  return pid > 0 && pid !== process.pid && !processAlive(pid);
}

function sweepStale(): void {
  let namespaces: string;
  let links: string;
  try {
    namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8', timeout: 10_000 });
    links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8', timeout: 10_000 });
  } catch {
    return;
  }
  for (const line of namespaces.split('\n')) {
    const name = line.trim().split(/\s+/)[0] ?? '';
    const owner = Number(NS_RE.exec(name)?.[1]);
    if (ownerDead(owner)) ipSyncQuiet(['netns', 'delete', name]);
  }
  // A host-side link outlives its namespace only if that was deleted without the pair.
  for (const line of links.split('\n')) {
    const ifname = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '';
    const owner = Number(LINK_RE.exec(ifname)?.[1]);
    if (ownerDead(owner)) ipSyncQuiet(['link', 'delete', ifname]);
  }
}

/** IPv4 addresses configured on this host, as numbers. */
async function hostAddresses(): Promise<number[]> {
  const { stdout } = await execa('ip', ['-j', '-4', 'addr', 'show'], { stdin: 'ignore' });
  const parsed = JSON.parse(stdout) as { addr_info?: { local?: string }[] }[];
  return parsed.flatMap((i) => (i.addr_info ?? []).map((a) => toNumber(a.local ?? '0.0.0.0')));
}

function toNumber(addr: string): number {
  return addr.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function toAddress(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** A /30 of 10.231.0.0/16 chosen from the pid and a counter, skipping any already in use here. */
async function pickSubnet(seq: number): Promise<{ hostIp: string; nsIp: string }> {
  const used = await hostAddresses();
  const base = toNumber('10.231.0.0');
  for (let i = 0; i < 64; i++) {
    const net = base + (((process.pid * 8 + seq + i * 7919) % SUBNETS) << 2);
    if (used.some((a) => a >= net && a < net + 4)) continue;
    return { hostIp: toAddress(net + 1), nsIp: toAddress(net + 2) };
  }
  throw new Error('no free /30 in 10.231.0.0/16');
}

/** Create the namespace (see the file comment). Throws if namespaces cannot be made here. */
export async function createIsolatedNamespace(): Promise<IsolatedNamespace> {
  installHooks();
  const seq = counter++;
  const name = `${NS_PREFIX}${process.pid}-${seq}`;
  const hostIf = `ag${process.pid}h${seq}`;
  const nsIf = `ag${process.pid}n${seq}`;
  const { hostIp, nsIp } = await pickSubnet(seq);
  const inNs = (args: string[]) => ip(['-n', name, ...args]);

  live.set(name, hostIf);
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await ip(['netns', 'delete', name]).catch(() => undefined); // takes the pair with it
      await ip(['link', 'delete', hostIf]).catch(() => undefined);
      live.delete(name);
    })());
  try {
    await ip(['netns', 'add', name]);
    await ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', name]);
    await ip(['addr', 'add', `${hostIp}/30`, 'dev', hostIf]);
    await ip(['link', 'set', hostIf, 'up']);
    await inNs(['link', 'set', 'lo', 'up']);
    await inNs(['addr', 'add', `${nsIp}/30`, 'dev', nsIf]);
    await inNs(['link', 'set', nsIf, 'up']);
    // No default route: the connected /30 is all the namespace can reach.
  } catch (e) {
    await close();
    throw e;
  }

  return {
    name,
    hostIp,
    nsIp,
    hostIf,
    exec: <O extends Options = Options>(cmd: string, args: readonly string[] = [], opts?: O) =>
      execa('ip', ['netns', 'exec', name, cmd, ...args], opts ?? ({} as O)) as unknown as ResultPromise<O>,
    close,
  };
}

let support: Promise<string | undefined> | undefined;

/**
 * Why isolated namespaces cannot be made here (not root, no CAP_NET_ADMIN, no `ip`, no veth), or
 * undefined when they can. Tries once per process: makes one namespace and deletes it.
 */
export function netnsUnavailable(): Promise<string | undefined> {
  support ??= (async () => {
    if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
    try {
      const ns = await createIsolatedNamespace();
      await ns.close();
      return undefined;
    } catch (e) {
      const uid = process.getuid?.();
      const who = uid === 0 ? 'as root' : `as uid ${uid ?? '?'}; run as root`;
      const err = e as { stderr?: string; message: string };
      return `cannot create a network namespace ${who}: ${(err.stderr || err.message).trim()}`;
    }
  })();
  return support;
}

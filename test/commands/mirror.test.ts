import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { freePort, startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { IscErrorCode } from '../../src/mirror/isc/errors.js';

const noStack = /\n\s+at .+:\d+:\d+/;

describe('airgap mirror: bad input and partial failure', () => {
  let src: TestRegistry;
  let locked: TestRegistry;
  let untrusted: TestRegistry;
  let dst: TestRegistry;
  let good: BuiltImage;
  let dir: string;
  let authFile: string;
  let certDir: string;
  /** The credentials and CAs every run here uses. */
  const access = () => ['--authfile', authFile, '--cert-dir', certDir];
  /** `airgap mirror -c <isc> --authfile … --cert-dir … <rest>` */
  const mirrorCli = (isc: string, ...rest: string[]) => airgap(['mirror', '-c', isc, ...access(), ...rest]);

  beforeAll(async () => {
    [src, locked, untrusted, dst] = await Promise.all([
      startRegistry(),
      startRegistry(),
      startRegistry(),
      startRegistry(),
    ]);
    [good] = await seedRegistry(src, [{ repo: 'ok/app', tag: 'v1', layers: [{ size: 300_000 }] }]);
    await seedRegistry(locked, [{ repo: 'locked/app', tag: 'v1', layers: [{ size: 1000 }] }]);
    await seedRegistry(untrusted, [{ repo: 'untrusted/app', tag: 'v1', layers: [{ size: 1000 }] }]);
    dir = await tempDir();
    const b64 = (u: string, p: string) => Buffer.from(`${u}:${p}`).toString('base64');
    authFile = join(dir, 'auth.json');
    await writeFile(
      authFile,
      JSON.stringify({
        auths: {
          [src.host]: { auth: b64(src.username, src.password) },
          [locked.host]: { auth: b64(locked.username, 'wrong-password-xyzzy') },
          [untrusted.host]: { auth: b64(untrusted.username, untrusted.password) },
          [dst.host]: { auth: b64(dst.username, dst.password) },
        },
      }),
      { mode: 0o600 },
    );
    // Trust only src, locked and dst (containers certs.d layout); untrusted's CA is not there.
    certDir = join(dir, 'certs.d');
    for (const r of [src, locked, dst]) {
      await mkdir(join(certDir, r.host), { recursive: true });
      await writeFile(join(certDir, r.host, 'ca.crt'), await readFile(r.caFile));
    }
  });

  afterAll(async () => {
    await Promise.all([src, locked, untrusted, dst].map((r) => r?.stop()));
  });

  it('copies what it can, explains each failure, exits 1, and never prints a secret or a stack', async () => {
    const isc = await writeIsc(dir, [
      `${src.host}/ok/app:v1`,
      `${src.host}/no/such-image:v1`,
      `${locked.host}/locked/app:v1`,
      `${untrusted.host}/untrusted/app:v1`,
    ]);
    const ws = `file://${dir}/ws`;
    const r = await mirrorCli(isc, '--workspace', ws, `docker://${dst.host}/m`, '--json');
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout);
    const by = (needle: string) =>
      report.summary.images.find((i: { source: string }) => i.source.includes(needle));
    expect(by(`${src.host}/ok/app`).status).toBe('copied');
    expect(by('no/such-image').error.code).toBe(MirrorError.REGISTRY_NOT_FOUND);
    expect(by(locked.host).error.code, JSON.stringify(report.summary.images, null, 1)).toBe(
      MirrorError.REGISTRY_UNAUTHORIZED,
    );
    expect(by(locked.host).error.message).toContain(authFile); // which credential source was used
    expect(by(untrusted.host).error.code).toBe(MirrorError.REGISTRY_TLS);
    expect(by(untrusted.host).error.hint).toMatch(/ca-file|certs\.d/);
    const all = r.stdout + r.stderr;
    for (const secret of ['wrong-password-xyzzy', src.password, dst.password])
      expect(all).not.toContain(secret);
    expect(r.stderr).not.toMatch(noStack);
    // The good image really arrived, as skopeo sees it.
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/m/ok/app:v1`, dst.skopeo)).toBe(good.digest);

    // The text form says the same to a person.
    const text = await mirrorCli(isc, '--workspace', ws, `docker://${dst.host}/m`);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toMatch(/FAILED .*no\/such-image/);
    expect(text.stdout).toMatch(/already present 1 · failed 3/);
  });

  it('an unreachable registry fails its images with one clear reason, the others still copy', async () => {
    const port = await freePort();
    const gone = `127.0.0.1:${port}`;
    const isc = await writeIsc(dir, [
      `${src.host}/ok/app:v1`,
      ...['a', 'b', 'c', 'd'].map((n) => `${gone}/lost/${n}:v1`),
    ]);
    const r = await mirrorCli(
      isc,
      '--retry-times',
      '2',
      '--workspace',
      `file://${dir}/ws-gone`,
      `docker://${dst.host}/gone`,
      '--json',
    );
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.summary.copied).toBe(1);
    const lost = report.summary.images.filter((i: { source: string }) => i.source.startsWith(gone));
    expect(lost).toHaveLength(4);
    for (const i of lost) {
      expect(i.error.code).toBe(MirrorError.REGISTRY_UNREACHABLE);
      expect(i.error.message).toContain(gone);
      expect(i.error.hint).toMatch(/host and port/);
    }
  });

  it('takes its defaults from AIRGAP_* variables: the CA files and the workspace', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const r = await airgap(['mirror', '-c', isc, '--authfile', authFile, `docker://${dst.host}/by-env`], {
      env: {
        AIRGAP_CA_FILE: `${src.caFile}:${dst.caFile}`,
        AIRGAP_WORKSPACE: `file://${dir}/ws-env`,
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/by-env/ok/app:v1`, dst.skopeo)).toBe(good.digest);
    const without = await airgap([
      'mirror',
      '-c',
      isc,
      '--authfile',
      authFile,
      `docker://${dst.host}/by-env`,
    ]);
    expect(without.exitCode).toBe(2); // no workspace: a usage error, as before
  });

  it('a workspace belongs to one destination: a run to another prefix is refused, its cluster resources kept', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const ws = `file://${dir}/ws-one-dest`;
    const first = await mirrorCli(isc, '--workspace', ws, `docker://${dst.host}/one`);
    expect(first.exitCode, first.stderr).toBe(0);
    const idms = async () =>
      (await readdir(join(dir, 'ws-one-dest', 'cluster-resources'))).filter((f) => /^i[dt]ms/.test(f));
    const before = await Promise.all(
      (await idms()).map((f) => readFile(join(dir, 'ws-one-dest', 'cluster-resources', f), 'utf8')),
    );
    expect(before.join()).toContain(`${dst.host}/one/`);
    const other = await mirrorCli(isc, '--workspace', ws, `docker://${dst.host}/two`);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(
      `error [WORKSPACE_OTHER_DESTINATION]: the workspace ${join(dir, 'ws-one-dest')} holds the state of mirroring to docker://${dst.host}/one, not docker://${dst.host}/two`,
    );
    const after = await Promise.all(
      (await idms()).map((f) => readFile(join(dir, 'ws-one-dest', 'cluster-resources', f), 'utf8')),
    );
    expect(after).toEqual(before);
    // The same destination again is fine.
    expect((await mirrorCli(isc, '--workspace', ws, `docker://${dst.host}/one`)).exitCode).toBe(0);
  });

  it('a destination every image would fail on is found by one preflight request and said once', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    // Untrusted CA: one error, before any plan or copy; no line per image.
    const tls = await mirrorCli(
      isc,
      '--workspace',
      `file://${dir}/ws-pre-tls`,
      `docker://${untrusted.host}/pre`,
    );
    expect(tls.exitCode).toBe(1);
    expect(tls.stderr).toContain(`error [REGISTRY_TLS]: the destination ${untrusted.host} cannot be used`);
    expect(tls.stderr.match(/REGISTRY_TLS/g)).toHaveLength(1);
    expect(tls.stdout).not.toContain('FAILED');
    expect(tls.stderr).toMatch(/hint: .*system store/);
    // Refused credentials, for a plan: not "0 B to move" about a destination it could not read.
    const plan = await airgap([
      'mirror',
      'plan',
      '-c',
      isc,
      ...access(),
      '--workspace',
      `file://${dir}/ws-pre-auth`,
      `docker://${locked.host}/pre`,
    ]);
    expect(plan.exitCode).toBe(1);
    expect(plan.stderr).toContain(`the destination ${locked.host} cannot be used`);
    expect(plan.stderr).toMatch(/REGISTRY_(UNAUTHORIZED|DENIED)/);
    expect(plan.stdout).not.toMatch(/to move/);
    expect(plan.stderr).not.toContain('wrong-password-xyzzy');
  });

  it('rejects an unknown field with file, line and field, and copies nothing', async () => {
    const isc = join(dir, 'bad.yaml');
    await writeFile(
      isc,
      [
        'kind: ImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'mirror:',
        '  additionalImages:',
        `    - name: ${src.host}/ok/app:v1`,
        '      tagret: v2',
        '',
      ].join('\n'),
    );
    const r = await mirrorCli(isc, '--workspace', `file://${dir}/ws2`, `docker://${dst.host}/bad`);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('bad.yaml:6');
    expect(r.stderr).toContain('mirror.additionalImages[0].tagret');
    expect(r.stderr).toMatch(/targetTag/); // did you mean
    expect(r.stderr).not.toMatch(noStack);
    await expect(skopeoDigest(`docker://${dst.skopeoHost}/bad/ok/app:v1`, dst.skopeo)).rejects.toThrow();
  });

  it('says which content is not supported yet, with its position', async () => {
    const isc = join(dir, 'platform.yaml');
    await writeFile(
      isc,
      'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  samples:\n    - name: ruby\n',
    );
    const r = await airgap(['mirror', '-c', isc, `file://${dir}/out`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/mirror\.samples is not supported yet \(.*platform\.yaml:4:3\)/);
  });

  it('names a file of the wrong kind before anything inside it, and each position once', async () => {
    // A DeleteImageSetConfiguration with a field problem too: the kind is what is wrong with it here.
    const disc = join(dir, 'delete.yaml');
    await writeFile(
      disc,
      'kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  platform:\n    channels:\n      - name: stable-4.18\n        minVersion: 4.18.9\n        maxVersion: 4.18.1\n',
    );
    const wrong = await airgap(['mirror', '-c', disc, `file://${dir}/out`]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain(
      `error [ISC_KIND]: ${disc} is a DeleteImageSetConfiguration; mirroring needs an ImageSetConfiguration (${disc}:1:7)`,
    );
    expect(wrong.stderr).not.toContain('swap');
    // An unsupported field among supported ones: its place is printed once.
    const two = join(dir, 'two.yaml');
    await writeFile(
      two,
      'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  samples:\n    - name: ruby\n  platform:\n    channels:\n      - name: stable-4.18\n  operators: []\n',
    );
    const r = await airgap(['mirror', '-c', two, `file://${dir}/out`]);
    expect(r.exitCode).toBe(2);
    for (const at of ['two.yaml:4:3']) expect(r.stderr.split(at).length - 1, `${at} in\n${r.stderr}`).toBe(1);
  });

  it('--from-version needs release channels to find the update path in', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const r = await mirrorCli(isc, `file://${dir}/from-version`, '--from-version', '4.18.1');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      '--from-version keeps the update path from that version, and the configuration names no release channel',
    );
  });

  it('usage errors exit 2 with a hint', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const cases: [string[], RegExp][] = [
      [['mirror', '--workspace', 'file:///tmp/ws', `docker://${dst.host}`], /say what to mirror: -c/],
      [['mirror', '-c', isc, '--plan', 'plan.json', 'file:///tmp/x'], /cannot be used together/],
      [['mirror', '-c', isc, `docker://${dst.host}/x`], /needs --workspace/],
      [['mirror', '-c', isc, '--from', 'file:///tmp/a', 'file:///tmp/b'], /cannot be combined/],
      [['mirror', '-c', isc, '--workspace', '/tmp/ws', `docker://${dst.host}/x`], /must be a file:\/\/ path/],
      [
        ['mirror', '-c', isc, '--workspace', 'file:///tmp/ws', 'docker://UPPER CASE'],
        /does not start with a registry host/,
      ],
      [['mirror', '-c', isc, '--archive-size', 'lots', 'file:///tmp/x'], /is not a size/],
      [['mirror', '-c', join(dir, 'missing.yaml'), 'file:///tmp/x'], /missing\.yaml/],
    ];
    for (const [args, msg] of cases) {
      const r = await airgap(args);
      expect(r.exitCode, `${args.join(' ')}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).toMatch(/hint/);
      expect(r.stderr).not.toMatch(noStack);
    }
  });

  it('takes flags in any order: a repeatable flag before the destination does not swallow it', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const ws = join(dir, 'ws-order');
    // The issue's own example: --ca-file (repeatable) right before the destination; --arch too.
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws}`,
      '--authfile',
      authFile,
      '--ca-file',
      src.caFile,
      '--ca-file',
      dst.caFile,
      '--arch',
      'amd64',
      `docker://${dst.host}/order`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Missing 1 required arg/);
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/order/ok/app:v1`, dst.skopeo)).toBe(good.digest);
  });

  it('refuses to share a workspace with a live run, and takes over a lock left by a dead one', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const ws = join(dir, 'locked-ws');
    await mkdir(ws, { recursive: true });
    await writeFile(join(ws, '.airgap.lock'), String(process.pid)); // this test process is alive
    const args = [
      'mirror',
      '-c',
      isc,
      ...access(),
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/lock`,
    ];
    const busy = await airgap(args);
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toMatch(new RegExp(`WORKSPACE_BUSY.*pid ${process.pid}`));
    await writeFile(join(ws, '.airgap.lock'), '999999'); // no such process: a kill -9 leftover
    const ok = await airgap(args);
    expect(ok.exitCode, ok.stderr).toBe(0);
  });

  it('shows the stack trace only with --verbose, and the error as JSON with --json', async () => {
    const args = ['mirror', '-c', join(dir, 'absent.yaml'), 'file:///tmp/airgap-never'];
    const quiet = await airgap(args);
    expect(quiet.stderr).not.toMatch(noStack);
    const verbose = await airgap([...args, '--verbose']);
    expect(verbose.exitCode).toBe(2);
    expect(verbose.stderr).toMatch(noStack);
    const json = await airgap([...args, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: IscErrorCode.Read, hint: expect.any(String) },
    });
  });

  it('--dry-run prints and writes the mapping and copies nothing', async () => {
    const isc = await writeIsc(dir, [
      `${src.host}/ok/app:v1`,
      { name: `${src.host}/ok/app:v1`, targetRepo: 'x/y', targetTag: 'z' },
    ]);
    const ws = join(dir, 'dry-ws');
    const r = await mirrorCli(
      isc,
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/dry`,
      '--dry-run',
      '--json',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.dryRun).toBe(true);
    // The tag is pinned to the digest it points at now; the size is measured, nothing is there yet.
    const pinned = `${src.host}/ok/app@${good.digest}`;
    expect(report.plan).toMatchObject([
      { source: pinned, destination: `${dst.host}/dry/ok/app:v1`, kind: 'additional', present: false },
      { source: pinned, destination: `${dst.host}/dry/x/y:z`, kind: 'additional', present: false },
    ]);
    expect(report.plan[0].bytes).toBeGreaterThan(0);
    expect(report.measure.bytesToMove).toBe(report.plan[0].bytes); // the same blobs, counted once
    const mapping = await readFile(join(ws, 'dry-run', 'mapping.txt'), 'utf8');
    expect(mapping).toBe(`${pinned}=${dst.host}/dry/ok/app:v1\n${pinned}=${dst.host}/dry/x/y:z\n`);
    const plan = JSON.parse(await readFile(join(ws, 'plan.json'), 'utf8'));
    expect(plan.images.map((e: { digest: string }) => e.digest)).toEqual([good.digest, good.digest]);
    await expect(skopeoDigest(`docker://${dst.skopeoHost}/dry/ok/app:v1`, dst.skopeo)).rejects.toThrow();
  });

  it('--dry-run writes the cluster resources the run would, beside the real ones, not over them', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app@${good.digest}`]);
    const ws = join(dir, 'dry-cr-ws');
    const r = await mirrorCli(isc, '--workspace', `file://${ws}`, `docker://${dst.host}/dry`, '--dry-run');
    expect(r.exitCode, r.stderr).toBe(0);
    const idms = await readFile(join(ws, 'dry-run', 'cluster-resources', 'idms-oc-mirror.yaml'), 'utf8');
    expect(idms).toContain('kind: ImageDigestMirrorSet');
    expect(idms).toMatch(new RegExp(`source: ${src.host}/ok(/app)?\\n`));
    expect(idms).toContain(`- ${dst.host}/dry/ok`);
    await expect(readdir(join(ws, 'cluster-resources'))).rejects.toThrow(/ENOENT/);
  });

  it('--max-nested-paths flattens deep names as oc-mirror does, and the IDMS maps each repository to its flat name', async () => {
    const [deep] = await seedRegistry(src, [
      { repo: 'org/team/tools/app', tag: 'v2', layers: [{ size: 2000 }] },
    ]);
    const isc = await writeIsc(dir, [`${src.host}/org/team/tools/app@${deep!.digest}`]);
    const ws = join(dir, 'nested-ws');
    const r = await mirrorCli(
      isc,
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/quay`,
      '--max-nested-paths',
      '2',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    // quay/org/team/tools/app → quay/org-team-tools-app: two components, as Quay allows.
    const flat = `${dst.host}/quay/org-team-tools-app`;
    expect(
      await skopeoDigest(`docker://${dst.skopeoHost}/quay/org-team-tools-app@${deep!.digest}`, dst.skopeo),
    ).toBe(deep!.digest);
    const idms = await readFile(join(ws, 'cluster-resources', 'idms-oc-mirror.yaml'), 'utf8');
    // Repository-scoped: the source repository itself, not a namespace above it.
    expect(idms).toContain(`source: ${src.host}/org/team/tools/app`);
    expect(idms).toContain(`- ${flat}`);

    // Two names that flatten into one are refused before anything is copied.
    const clash = await writeIsc(
      dir,
      [
        `${src.host}/ok/app@${good.digest}`,
        { name: `${src.host}/ok/app@${good.digest}`, targetRepo: 'ok-app' },
      ],
      [],
      'clash.yaml',
    );
    const refused = await mirrorCli(
      clash,
      '--workspace',
      `file://${join(dir, 'clash-ws')}`,
      `docker://${dst.host}`,
      '--max-nested-paths',
      '1',
    );
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      'error [NESTED_PATHS_COLLISION]: --max-nested-paths 1 flattens both ok/app and ok-app into ok-app',
    );
  });

  it('says when the archive was written by another airgap, and unpacks it all the same', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app@${good.digest}`]);
    const out = join(dir, 'arch-version');
    expect((await mirrorCli(isc, `file://${out}`)).exitCode).toBe(0);
    const manifestPath = join(out, 'airgap-archive.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    const { stdout: ours } = await airgap(['version', '--json']);
    expect(manifest.createdBy).toBe(`airgap ${JSON.parse(ours).version}`);
    const same = await mirrorCli(isc, '--from', `file://${out}`, `docker://${dst.host}/same-version`);
    expect(same.exitCode, same.stderr).toBe(0);
    expect(same.stderr).not.toContain('the archive was written by');

    await writeFile(manifestPath, JSON.stringify({ ...manifest, createdBy: 'airgap 0.0.9' }));
    const other = await mirrorCli(isc, '--from', `file://${out}`, `docker://${dst.host}/other-version`);
    expect(other.exitCode, other.stderr).toBe(0);
    expect(other.stderr).toContain('warning: the archive was written by airgap 0.0.9; this is airgap');
    expect(
      await skopeoDigest(`docker://${dst.skopeoHost}/other-version/ok/app@${good.digest}`, dst.skopeo),
    ).toBe(good.digest);
  });

  it('--since carries again what earlier archives carried from that day on', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app@${good.digest}`]);
    const out = join(dir, 'arch-since');
    const run = async (...rest: string[]) => {
      const r = await mirrorCli(isc, `file://${out}`, '--json', ...rest);
      expect(r.exitCode, r.stderr).toBe(0);
      return JSON.parse(r.stdout).archive as { previouslyArchived: number };
    };
    const first = await run();
    expect(first.previouslyArchived).toBe(0);
    const history = await readFile(join(out, 'working-dir', 'archive-history.txt'), 'utf8');
    // Each blob with the time it was first carried.
    expect(history).toMatch(/^sha256:[0-9a-f]{64} \d{4}-\d{2}-\d{2}T[\d:.]+Z$/m);
    // Again: the blobs (manifests are always carried) are not carried twice.
    const again = (await run()).previouslyArchived;
    expect(again).toBe(history.trim().split('\n').length - 1);
    expect((await run('--since', '2000-01-01')).previouslyArchived).toBe(0); // all carried since then
    expect((await run('--since', '2999-01-01')).previouslyArchived).toBe(again);

    const bad = await mirrorCli(isc, `file://${out}`, '--since', '2026-02-30');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--since "2026-02-30" is not a date');
    const registry = await mirrorCli(
      isc,
      '--workspace',
      `file://${join(dir, 'since-ws')}`,
      `docker://${dst.host}/since`,
      '--since',
      '2026-01-01',
    );
    expect(registry.exitCode).toBe(2);
    expect(registry.stderr).toContain('--since applies to archives');
  });

  it('verify reports a damaged archive part and exits 1', async () => {
    const isc = await writeIsc(dir, [`${src.host}/ok/app:v1`]);
    const out = join(dir, 'arch');
    const m = await mirrorCli(isc, `file://${out}`);
    expect(m.exitCode, m.stderr).toBe(0);
    const ok = await airgap(['mirror', 'verify', `file://${out}`, '--json']);
    expect(JSON.parse(ok.stdout).ok).toBe(true);
    const part = join(out, 'mirror_000001.tar');
    const bytes = await readFile(part);
    bytes[bytes.length - 2000]! ^= 0xff;
    await writeFile(part, bytes);
    const bad = await airgap(['mirror', 'verify', `file://${out}`]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toMatch(/BROKEN\s+mirror_000001\.tar: .*hashes to/);
    // And disk → registry refuses the damaged archive before pushing anything.
    const d2m = await mirrorCli(isc, '--from', `file://${out}`, `docker://${dst.host}/damaged`);
    expect(d2m.exitCode).toBe(1);
    expect(d2m.stderr).toMatch(/ARCHIVE_CORRUPT/);
    await expect(skopeoDigest(`docker://${dst.skopeoHost}/damaged/ok/app:v1`, dst.skopeo)).rejects.toThrow();
  });
});

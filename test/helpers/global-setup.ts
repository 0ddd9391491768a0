/**
 * vitest globalSetup: make sure the real programs the integration tests drive are installed. Runs
 * scripts/test-deps.sh (apt-get, as root) only when one is missing, and fails clearly if it cannot.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testCertificates, TEST_PKI_ENV } from '../../lab/pki.js';

const REQUIRED = [
  'docker-registry',
  'skopeo',
  'htpasswd',
  'nginx',
  'wrk',
  'curl',
  'openssl',
  'kubectl',
  'gpg',
  'podman',
  'runc',
  'systemd-analyze',
];

function onPath(cmd: string): boolean {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  return dirs.some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The required test programs that are not installed. */
export function missingTestDeps(): string[] {
  return REQUIRED.filter((cmd) => !onPath(cmd));
}

/** Build the CLI (compile, then its command manifest) so tests that run `bin/run.js` exercise the current source. */
function buildCli(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  execFileSync('npm', ['run', 'build', '--silent'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 5 * 60_000,
  });
}

export default function setup(): () => void {
  // Tests talk to registries on loopback; a proxy set for the machine must not reroute them (the
  // proxy tests set their own). Workers inherit this process's environment.
  for (const v of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'])
    delete process.env[v];
  // No test may reach the real release signature store: a run that is not given the lab's store
  // (--signature-url) finds nothing listening here instead.
  process.env.OCP_SIGNATURE_URL ??= 'http://127.0.0.1:9/no-signature-store';
  // Every temporary file of the run (registries' storage, archives, layouts) goes under one
  // directory that is removed when the run ends: hundreds of runs must not fill the disk.
  const runTmp = mkdtempSync(join(tmpdir(), 'airgap-run-'));
  process.env.TMPDIR = runTmp;
  const teardown = () => rmSync(runTmp, { recursive: true, force: true });
  // One test CA and server certificate for the whole run, read by lab/pki.ts in every test file.
  const pkiFile = join(runTmp, 'test-pki.json');
  writeFileSync(pkiFile, JSON.stringify(testCertificates()), { mode: 0o600 });
  process.env[TEST_PKI_ENV] = pkiFile;
  if (process.env.AIRGAP_SKIP_BUILD !== '1') buildCli();
  const missing = missingTestDeps();
  if (missing.length === 0) return teardown;
  const script = resolve(dirname(fileURLToPath(import.meta.url)), '../../scripts/test-deps.sh');
  try {
    execFileSync('bash', [script], { stdio: 'inherit', timeout: 15 * 60_000 });
  } catch (e) {
    throw new Error(
      `test programs missing (${missing.join(', ')}) and ${script} could not install them: ` +
        `${(e as Error).message}. Run it as root, or install: docker-registry skopeo apache2-utils nginx-light wrk curl openssl kubernetes-client gnupg podman runc systemd`,
      { cause: e },
    );
  }
  const still = missingTestDeps();
  if (still.length > 0) throw new Error(`test programs still missing after ${script}: ${still.join(', ')}`);
  return teardown;
}

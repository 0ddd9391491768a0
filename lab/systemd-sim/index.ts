/**
 * A stand-in for systemd as PID 1, for tests on machines where systemd does not run (containers):
 * `systemctl` and `journalctl` shims that a test puts first on PATH, backed by state under a temp
 * dir. Units are read from /etc/systemd/system (or `$AIRGAP_SYSTEMD_SIM_UNITS`), as the product
 * writes them; their processes run detached under one supervisor per unit, with the caller's
 * environment (so the private podman's CONTAINERS_* variables reach them).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIM_ENV, UNITS_ENV, readState } from './state.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface SystemdSim {
  /** Add to a child's environment: PATH with the shims first, and the state directory. */
  env: { PATH: string; [SIM_ENV]: string; [UNITS_ENV]?: string; [name: string]: string | undefined };
  /** The state directory. */
  dir: string;
  /** Run the simulator's systemctl (for tests' own checks); stdout, stderr and exit code. */
  systemctl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }>;
  /** Stop every unit the simulator started (for afterAll). Never throws. */
  stopAll(): Promise<void>;
}

function shim(bin: string, tool: string): void {
  const file = join(bin, tool);
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const node = q(process.execPath);
  const hook = q(`file://${join(HERE, 'ts-resolve.mjs')}`);
  const main = q(join(HERE, 'main.ts'));
  // Written with fs, not a template file, so the paths of this checkout and this node are baked in.
  const text = `#!/bin/sh\nexec ${node} --import ${hook} ${main} ${tool} "$@"\n`;
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

function run(
  env: NodeJS.ProcessEnv,
  cmd: string,
  args: string[],
): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ stdout, stderr, code });
    });
  });
}

/**
 * Set the simulator up under `dir`: shims in `dir/bin`, state in `dir/state`. `unitsDir` reads unit
 * files from there instead of /etc/systemd/system (only for the simulator's own tests); `env` is
 * added to the returned `env` (e.g. podmanEnv's variables, so the units' podman uses them).
 */
export function startSystemdSim(
  dir: string,
  opts: { unitsDir?: string; env?: Record<string, string> } = {},
): SystemdSim {
  const bin = join(dir, 'bin');
  const state = join(dir, 'state');
  mkdirSync(bin, { recursive: true });
  mkdirSync(state, { recursive: true });
  for (const tool of ['systemctl', 'journalctl']) shim(bin, tool);
  const env: SystemdSim['env'] = {
    ...opts.env,
    PATH: [bin, process.env.PATH ?? ''].join(delimiter),
    [SIM_ENV]: state,
  };
  if (opts.unitsDir) env[UNITS_ENV] = opts.unitsDir;
  const systemctl = (...args: string[]) => run({ ...process.env, ...env }, join(bin, 'systemctl'), args);
  return {
    env,
    dir: state,
    systemctl,
    async stopAll() {
      let names: string[];
      try {
        names = readdirSync(join(state, 'run'))
          .filter((f) => f.endsWith('.json'))
          .map((f) => f.slice(0, -'.json'.length));
      } catch {
        return;
      }
      for (const name of names) {
        if (readState(state, name).supervisorPid) await systemctl('stop', name);
      }
    },
  };
}

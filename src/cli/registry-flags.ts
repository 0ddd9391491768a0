/**
 * What the `airgap registry` commands share: the directory and unit flags, and one line per step as
 * each happens (`[unit] changed: …`, `ok` for a step already so, `would` under --dry-run, with the
 * commands it would run).
 */
import { Flags } from '@oclif/core';

export const registryDirFlags = {
  dir: Flags.string({
    description: 'The registry directory (registry.json, installed.json).',
    default: '/opt/registry',
  }),
  name: Flags.string({
    description: "The systemd unit and podman container name (default: the installed one's, else registry).",
  }),
};

/** A step of install, renew or uninstall as the library reports it. */
interface HostStep {
  step: string;
  status: 'changed' | 'unchanged' | 'planned';
  message: string;
  commands?: string[];
}

/** Print each step on stdout as it happens (nothing with --json); `changed` reads as `changedWord`. */
export function stepPrinter(o: {
  json: boolean;
  dryRun: boolean;
  changedWord?: string;
}): (s: HostStep) => void {
  const mark = { changed: o.changedWord ?? 'changed', unchanged: 'ok', planned: 'would' };
  return (s) => {
    if (o.json) return;
    process.stdout.write(`[${s.step}] ${mark[s.status]}: ${s.message}\n`);
    if (o.dryRun) for (const c of s.commands ?? []) process.stdout.write(`    $ ${c}\n`);
  };
}

import { Flags } from '@oclif/core';
import { registryDirFlags } from '../../cli/registry-flags.js';
import { AirgapCommand } from '../../cli/command.js';
import { gcRegistry, type GcResult } from '../../registry/index.js';

const fmt = (n: number) => `${n.toLocaleString('en-US')} bytes`;

export default class RegistryGc extends AirgapCommand {
  static override summary =
    "Give back the disk `airgap mirror delete` freed: the bastion registry's garbage collected, stopped meanwhile, started again.";

  static override description = `Deleting manifests (airgap mirror delete) frees no disk by itself: the blobs
they used stay until the registry collects its garbage. This command:

  1. stops the unit (systemctl stop <name>.service) and checks its container
     is gone: distribution must not collect while it takes pushes
  2. runs distribution's collector once in the registry's own image, with
     the same mounts and no network:
       podman run --rm --pull never --net none -v … <image> \\
         garbage-collect /etc/docker/registry/config.yml
  3. starts the unit again, also when the collection failed, and waits
     until it answers (a unit that was stopped before stays stopped)

and reports the bytes and blobs the storage lost, beside what
\`airgap mirror delete --generate\` predicted (the first line of its
delete-images.yaml: --workspace or --delete-yaml-file). The prediction counts
the layers and configs; the registry stores each deleted manifest as a blob
too, so the blobs that go are the predicted ones plus one per manifest, and
the bytes differ only by those manifests and the registry's own bookkeeping.

Never --delete-untagged: in distribution 2.x it deletes every manifest no tag
names, which are the platform manifests of every multi-arch image (their
index names them, no tag does: distribution issue #3178) and every image
pushed by digest only. airgap mirrors both, so \`airgap mirror check\` would
fail afterwards. Plain garbage-collect removes only blobs no manifest
references, which is exactly what \`airgap mirror delete\` (deleting each
manifest, an index's children first) leaves behind.

--dry-run counts what would go (garbage-collect --dry-run) while the registry
keeps serving; it removes nothing. A registry nothing was ever pushed to has
nothing to collect, and says so.`;

  static override examples = [
    {
      description: 'After airgap mirror delete: reclaim the space and compare with the prediction:',
      command: '<%= config.bin %> registry gc --dir /opt/registry --workspace file:///srv/mirror/ws',
    },
    {
      description: 'What would go, the registry still serving:',
      command: '<%= config.bin %> registry gc --dir /opt/registry --dry-run',
    },
    {
      description: 'The prediction from a delete list kept elsewhere, as JSON:',
      command:
        '<%= config.bin %> registry gc --dir /opt/registry --delete-yaml-file delete-images.yaml --json',
    },
  ];

  static override flags = {
    ...registryDirFlags,
    'delete-yaml-file': Flags.string({
      description: 'The delete-images.yaml of airgap mirror delete --generate, for its prediction.',
      exclusive: ['workspace'],
    }),
    workspace: Flags.string({
      description: "The mirror workspace (file://DIR): its delete/delete-images.yaml's prediction.",
      exclusive: ['delete-yaml-file'],
    }),
    timeout: Flags.integer({
      description: 'Seconds the registry may take to answer after it starts again.',
      default: 60,
      min: 1,
    }),
    'dry-run': Flags.boolean({
      description:
        'Count what would go (garbage-collect --dry-run), the registry still serving; remove nothing.',
    }),
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RegistryGc);
    const result = await gcRegistry({
      dir: flags.dir,
      ...(flags.name ? { name: flags.name } : {}),
      ...(flags['delete-yaml-file'] ? { deleteYamlFile: flags['delete-yaml-file'] } : {}),
      ...(flags.workspace ? { workspace: flags.workspace } : {}),
      dryRun: flags['dry-run'],
      readyTimeoutMs: flags.timeout * 1000,
      report: (line) => {
        if (!flags.json) process.stdout.write(`${line}\n`);
      },
    });
    if (flags.json) {
      this.printJson(result);
      return;
    }
    process.stdout.write(render(result));
  }
}

/** The result in words. */
function render(r: GcResult): string {
  const lines: string[] = [];
  const e = r.eligible;
  if (r.dryRun)
    lines.push(
      `would remove ${e.blobs} blob(s), ${fmt(e.bytes)}, from ${r.dataDir} (the storage holds ${r.before.blobs} blob(s), ${fmt(r.before.bytes)})`,
    );
  else if (r.reclaimed)
    lines.push(
      `reclaimed ${r.reclaimed.blobs} blob(s), ${fmt(r.reclaimed.bytes)} (${fmt(r.reclaimed.diskBytes)} on disk): ${r.dataDir} went from ${r.before.blobs} blob(s), ${fmt(r.before.bytes)} to ${r.after!.blobs}, ${fmt(r.after!.bytes)}`,
    );
  if (r.prediction) {
    const p = r.prediction;
    const got = r.dryRun ? { blobs: e.blobs, bytes: e.bytes } : r.reclaimed!;
    const diff = got.bytes - p.bytes;
    lines.push(
      `mirror delete --generate predicted ${p.blobs} blob(s), ${fmt(p.bytes)}, and ${p.manifests} manifest(s) (${p.file})`,
      `${r.dryRun ? 'would go' : 'went'}: ${got.blobs} blob(s) (the registry stores each manifest as a blob too: ${p.blobs} + ${p.manifests} expected), ${fmt(got.bytes)} (${diff >= 0 ? '+' : ''}${diff.toLocaleString('en-US')} bytes: the manifests and the registry's own bookkeeping)`,
    );
    if (got.blobs !== p.blobs + p.manifests)
      lines.push(
        '  the blob counts differ: was the delete list applied (airgap mirror delete --delete-yaml-file …), or did the mirror change since it was generated?',
      );
  } else if (r.predictionNote) lines.push(r.predictionNote);
  lines.push(...r.notes);
  if (!r.dryRun)
    lines.push(
      r.wasRunning
        ? `${r.registry} (${r.name}.service) answers again`
        : `${r.name}.service was not running before, and was left stopped`,
    );
  return `${lines.join('\n')}\n`;
}

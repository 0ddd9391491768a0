import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf } from '../../cli/cluster-flags.js';
import { mirrorFlags, mirrorOptions, withProgress } from '../../cli/mirror-flags.js';
import { releasesInUse } from '../../cluster/index.js';
import { renderDeletion, runDelete } from '../../mirror/index.js';

export default class MirrorDelete extends AirgapCommand {
  static override summary =
    'Delete images from the mirror registry, in two steps: list them, then delete the list.';

  static override description = `oc-mirror v2's two phases, with the same arguments:
1. --generate: the DeleteImageSetConfiguration (-c; kind DeleteImageSetConfiguration, a delete:
   section shaped like mirror:) is resolved like a mirror plan, found in the mirror by digest,
   and written to <workspace>/delete/delete-images.yaml. Nothing is changed. What the
   workspace's last plan still mirrors is never listed (a release component shared by two
   releases stays while one of them is kept), and the report says which blobs only the deleted
   images use and how many bytes a registry garbage collection would give back.
2. --delete-yaml-file <list>: each listed manifest is deleted (children of an index first).
   A registry that refuses deletes is said so, with how to allow them. The disk space comes back
   when the registry collects its garbage; the output says how.
With --kubeconfig (the hub), --generate refuses to list a release that a hosted cluster on that hub
runs or is updating to, naming the cluster.`;

  static override examples = [
    {
      description: 'List what deleting the releases and images of delete-isc.yaml would remove:',
      command:
        '<%= config.bin %> mirror delete -c delete-isc.yaml --workspace file://./ws --generate docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'Then delete them:',
      command:
        '<%= config.bin %> mirror delete --delete-yaml-file ./ws/delete/delete-images.yaml docker://mirror.example.com:8443/ocp',
    },
  ];

  static override args = {
    destination: Args.string({ description: 'The mirror: docker://host[:port][/prefix]', required: true }),
  };

  static override flags = {
    ...mirrorFlags,
    generate: Flags.boolean({
      description: 'Write <workspace>/delete/delete-images.yaml from -c; delete nothing.',
      exclusive: ['delete-yaml-file'],
    }),
    'delete-yaml-file': Flags.string({ description: 'Delete the manifests this delete-images.yaml lists.' }),
    kubeconfig: Flags.string({
      description:
        'Kubeconfig of the hub (management cluster): --generate then refuses to list a release a hosted cluster on it runs.',
    }),
    context: hubFlags.context,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(MirrorDelete);
    // With the hub, the releases its hosted clusters run are never deleted.
    const inUse = flags.generate && flags.kubeconfig ? await releasesInUse(hubOf(flags)) : undefined;
    const result = await withProgress(
      flags.json,
      (progress) =>
        runDelete({
          ...mirrorOptions(flags, args.destination),
          version: this.config.version,
          generate: flags.generate,
          deleteYamlFile: flags['delete-yaml-file'],
          ...(inUse ? { inUse } : {}),
          progress,
        }),
      'run the same command again: what is already deleted is counted as gone',
    );
    if (flags.json) this.printJson(result);
    else process.stdout.write(renderDeletion(result, args.destination));
    if ('failed' in result && result.failed.length > 0) process.exitCode = 1;
  }
}

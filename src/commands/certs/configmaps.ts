import { Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import {
  DEFAULT_HOSTED_CLUSTER_NAMESPACE,
  trustConfigMaps,
  trustConfigMapsYaml,
  type TrustConfigMaps,
} from '../../certs/index.js';

/** What each written file is, for the summary. */
function describeFiles(r: TrustConfigMaps & { files: string[] }): string[] {
  const m = new Set(r.mappings.map((x) => x.source)).size;
  const what = [
    `ConfigMap openshift-config/registry-config: ${r.registries.map((g) => g.key).join(', ')}`,
    'Image cluster: spec.additionalTrustedCA.name = registry-config',
    `ConfigMap ${r.userCaBundle.metadata.namespace}/user-ca-bundle: ${r.cas.length} CA(s)`,
    `ConfigMap multicluster-engine/custom-registries: ${r.cas.length} CA(s), ${m} mirrored source(s)`,
    'registries.conf for podman and skopeo on the bastion (the same as in custom-registries)',
    'how to apply them',
  ];
  const width = Math.max(...r.files.map((f) => f.length));
  return r.files.map((f, i) => `wrote ${f.padEnd(width)}  ${what[i] ?? ''}`);
}

export default class CertsConfigmaps extends AirgapCommand {
  static override summary =
    'Write the ConfigMaps that make the hub, hosted clusters and assisted-service trust your mirror registry.';

  static override description = `A disconnected hub pulls everything from your mirror registry. Three
places must trust the registry's CA, and assisted-service must know the
mirror mapping. This command writes all of it from the CA file(s) and the
mapping that \`airgap mirror\` left in <workspace>/cluster-resources:

- registry-config (namespace openshift-config): one key per registry,
  host..port (two dots before the port; just host without one), holding
  the CA PEM. With the Image patch, the hub's nodes and the HyperShift
  operator trust the registry.
- image-cluster-patch.yaml: sets spec.additionalTrustedCA.name on
  image.config.openshift.io/cluster (README.md has the oc patch one-liner).
- user-ca-bundle (namespace --hosted-cluster-namespace): ca-bundle.crt,
  for HostedCluster spec.additionalTrustBundle; the hosted cluster's
  workers trust the registry.
- custom-registries (namespace multicluster-engine, label
  app=assisted-service): ca-bundle.crt and registries.conf, for
  AgentServiceConfig spec.mirrorRegistryRef; discovery hosts pull from
  the mirror.
- registries.conf on its own (for podman and skopeo on the bastion), and
  README.md with the order to apply them in.

Registries: name them as your image references do, host[:port]; the port
matters (registry.example.com:8443 and registry.example.com are different
keys). Each --registry gets every --ca; --registry host[:port]=<pem file>
gives that registry its own CA file instead. Without --registry, the
registries of the mirrors in the mapping are used.

The mapping: --cluster-resources <dir> reads every ImageDigestMirrorSet,
ImageTagMirrorSet and ImageContentSourcePolicy in the directory; or name
the files with --idms and --itms. --mirror source=mirror adds a mapping by
hand (@digest: digest pulls only, like an IDMS; @tag: tag pulls only;
neither: both).

Every input is checked before anything is written. Each --ca must be a
PEM CA certificate (basicConstraints CA:true) that has not expired, with
no private key in the file. Without --output the four objects go to
stdout as one YAML stream, for oc apply -f -. --output replaces the files
of an earlier run.`;

  static override examples = [
    {
      description: 'After airgap mirror to registry.example.com:8443, into ./trust:',
      command:
        '<%= config.bin %> certs configmaps --ca pki/ca.crt --registry registry.example.com:8443 --cluster-resources ws/cluster-resources -o trust',
    },
    {
      description: 'Straight to the hub (the Image patch included):',
      command:
        '<%= config.bin %> certs configmaps --ca pki/ca.crt --cluster-resources ws/cluster-resources | oc apply -f -',
    },
    {
      description: 'Two registries with different CAs, and oc-mirror files:',
      command:
        '<%= config.bin %> certs configmaps --registry mirror.example.com:8443=mirror-ca.crt --registry quay.lab.example.com=quay-ca.crt --idms idms-oc-mirror.yaml --itms itms-oc-mirror.yaml -o trust',
    },
    {
      description: 'A mapping by hand, for a hosted cluster in namespace hcp:',
      command:
        '<%= config.bin %> certs configmaps --ca ca.crt --mirror quay.io/openshift-release-dev=registry.example.com:8443/ocp/openshift-release-dev@digest --hosted-cluster-namespace hcp -o trust',
    },
  ];

  static override flags = {
    ca: Flags.string({
      description: 'CA certificate (PEM) the registry certificate chains to; repeatable, all are trusted.',
      ...REPEATABLE,
    }),
    registry: Flags.string({
      description:
        'Registry to trust, host[:port] (or host[:port]=<CA PEM file> for its own CA); repeatable. Default: the mirror registries of the mapping.',
      ...REPEATABLE,
    }),
    'cluster-resources': Flags.string({
      description: "airgap mirror's <workspace>/cluster-resources directory (IDMS/ITMS files).",
      exclusive: ['idms', 'itms'],
    }),
    idms: Flags.string({
      description: 'ImageDigestMirrorSet YAML file (idms-oc-mirror.yaml); repeatable.',
      ...REPEATABLE,
    }),
    itms: Flags.string({
      description: 'ImageTagMirrorSet YAML file (itms-oc-mirror.yaml); repeatable.',
      ...REPEATABLE,
    }),
    mirror: Flags.string({
      description: 'A mapping by hand, source=mirror[@digest|@tag] (registry[/path] scopes); repeatable.',
      ...REPEATABLE,
    }),
    'hosted-cluster-namespace': Flags.string({
      description: 'Namespace of the HostedCluster, where user-ca-bundle goes.',
      default: DEFAULT_HOSTED_CLUSTER_NAMESPACE,
    }),
    output: Flags.string({
      char: 'o',
      description: 'Directory for the files (created if needed). Default: the objects as YAML on stdout.',
    }),
    json: Flags.boolean({ description: 'Print the result as JSON (objects, registries, CAs, files).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(CertsConfigmaps);
    const r = await trustConfigMaps({
      caFiles: flags.ca ?? [],
      registries: flags.registry ?? [],
      ...(flags['cluster-resources'] !== undefined ? { clusterResources: flags['cluster-resources'] } : {}),
      idmsFiles: flags.idms ?? [],
      itmsFiles: flags.itms ?? [],
      mirrors: flags.mirror ?? [],
      hostedClusterNamespace: flags['hosted-cluster-namespace'],
      ...(flags.output !== undefined ? { output: flags.output } : {}),
    });
    if (flags.json) {
      this.printJson({
        files: r.files,
        registries: r.registries,
        cas: r.cas.map(({ pem: _pem, ...c }) => c),
        mappings: r.mappings,
        mirrorSets: r.mirrorSets,
        patchCommand: r.patchCommand,
        warnings: r.warnings,
        objects: {
          registryConfig: r.registryConfig,
          imagePatch: r.imagePatch,
          userCaBundle: r.userCaBundle,
          customRegistries: r.customRegistries,
        },
      });
      return;
    }
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    if (flags.output === undefined) {
      process.stdout.write(trustConfigMapsYaml(r));
      process.stderr.write(`note: the Image object above is the same change as: ${r.patchCommand}\n`);
      return;
    }
    process.stdout.write(`${describeFiles(r).join('\n')}\n`);
    process.stdout.write(`next (see ${r.files.at(-1)}): oc apply -f ${r.files[0]}, then ${r.patchCommand}\n`);
  }
}

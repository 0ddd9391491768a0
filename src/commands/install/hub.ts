import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf, stderrReporter, timeoutFlag, timeoutMs } from '../../cli/cluster-flags.js';
import { installHubFromSite } from '../../cluster/index.js';

export default class InstallHub extends AirgapCommand {
  static override summary =
    'Prepare the management cluster (hub) for disconnected hosted clusters: registry trust, mirrors, catalogs, MCE components, assisted-service.';

  static override description = `Applies, with server-side apply and in the order the disconnected runbook
uses, waiting where it waits:

  trust     ConfigMap openshift-config/registry-config (the mirror's CA, one
            host..port key per registry) and the cluster Image
            spec.additionalTrustedCA; the release signature ConfigMap
            (openshift-config-managed) when cluster-resources has one
  mirror    the ImageDigestMirrorSets / ImageTagMirrorSets of the site (the
            cluster-resources airgap mirror wrote), then every Node Ready
            again; when they changed, the HyperShift operator is restarted
            (it reads them only when it starts)
  catalogs  the mirrored CatalogSources
  mce       MultiClusterEngine components assisted-service, hypershift,
            hypershift-local-hosting and local-cluster
  config    the HyperShift operator install flags (no telemetry remote write
            from a disconnected hub) and custom-registries for assisted-service
  agent     AgentServiceConfig agent (mirrorRegistryRef, the osImages you serve
            with airgap serve-images)

then waits for the AgentServiceConfig to reconcile and for assisted-service
and the HyperShift operator to be Available.

Preflight first: the hub's OpenShift version (4.14 or later), its
MultiClusterEngine (install the operator from your mirrored catalog first),
a storage class for the assisted-service volumes, and what is already there.
Running it again changes only what differs. --render writes the manifests
instead.`;

  static override examples = [
    {
      description: 'Prepare the hub of ~/.kube/config for the site:',
      command: '<%= config.bin %> install hub --site site.yaml',
    },
    {
      description: 'Only write the manifests, to review or apply with oc:',
      command: '<%= config.bin %> install hub --site site.yaml --render hub-manifests/',
    },
  ];

  static override flags = {
    site: Flags.string({ char: 'f', description: 'Site file (docs/site-config.md).', required: true }),
    ...hubFlags,
    render: Flags.string({
      description: 'Write the manifests into this directory instead of applying them.',
    }),
    timeout: timeoutFlag('30m'),
    json: Flags.boolean({ description: 'Print the result as JSON on stdout (progress stays on stderr).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(InstallHub);
    const limit = timeoutMs(flags.timeout);
    const out = await installHubFromSite({
      siteFile: flags.site,
      hub: hubOf(flags),
      renderDir: flags.render,
      report: stderrReporter,
      phaseTimeoutMs: limit,
    });
    if (out.mode === 'render') {
      if (flags.json) this.printJson({ files: out.files });
      else for (const f of out.files) this.log(`wrote ${f}`);
      return;
    }
    const { result } = out;
    if (flags.json) this.printJson(result);
    else {
      const created = result.applied.filter((a) => a.created).length;
      this.log(
        `hub ready: ${result.applied.length} objects applied (${created} created, ${result.applied.length - created} configured)`,
      );
    }
  }
}

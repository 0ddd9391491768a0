/**
 * A site directory for tests: every file the example sites name (CA, pull secret, SSH key, BMC
 * credentials, a cluster-resources directory as airgap mirror writes it, osImages), with the
 * examples copied in, so they load with their files checked and render.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testCertificates } from '../../helpers/tls.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const EXAMPLES = join(REPO, 'examples');

export const REGISTRY = 'registry.lab.example.com:8443';
export const BMC_PASSWORD = 'bmc-pa55word-not-for-logs';
export const PULL_AUTH = Buffer.from('mirror-user:mirror-pa55').toString('base64');
export const RELEASE_DIGEST = `${REGISTRY}/openshift/release-images@sha256:${'a'.repeat(64)}`;
export const CPO_IMAGE = `${REGISTRY}/openshift/release@sha256:${'b'.repeat(64)}`;

const IDMS = `---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-release-0
spec:
  imageDigestMirrors:
  - mirrors:
    - ${REGISTRY}/openshift/release
    source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
  - mirrors:
    - ${REGISTRY}/openshift/release-images
    source: quay.io/openshift-release-dev/ocp-release
---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-operator-0
spec:
  imageDigestMirrors:
  - mirrors:
    - ${REGISTRY}/redhat
    source: registry.redhat.io/redhat
status: {}
`;

const ITMS = `---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-generic-0
spec:
  imageTagMirrors:
  - mirrors:
    - ${REGISTRY}/ubi9
    source: registry.access.redhat.com/ubi9
`;

const CATALOG = `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index-v4-17
  namespace: openshift-marketplace
spec:
  image: ${REGISTRY}/redhat/redhat-operator-index:v4.17
  sourceType: grpc
`;

const OS_IMAGES = `spec:
  osImages:
  - cpuArchitecture: x86_64
    openshiftVersion: "4.17"
    version: 417.94.202410090854-0
    url: http://192.168.125.1:8080/images/rhcos-417.94.202410090854-0-live.x86_64.iso
    rootFSUrl: http://192.168.125.1:8080/images/rhcos-417.94.202410090854-0-live-rootfs.x86_64.img
`;

/** Write the files into `dir` (and copy both examples there). */
export async function writeSiteFixture(dir: string): Promise<void> {
  const w = async (rel: string, text: string) => {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
  };
  await w('certs/ca.crt', testCertificates().ca.certPem.replaceAll('\r\n', '\n'));
  await w('pull-secret.json', JSON.stringify({ auths: { [REGISTRY]: { auth: PULL_AUTH } } }));
  await w(
    'id_ed25519.pub',
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAirgapTestKeyOnly0000000000000000000000 test@airgap\n',
  );
  for (const h of ['hosted-worker-0', 'hosted-worker-1', 'hosted-dual-worker-0', 'hosted-dual-worker-1'])
    await w(`bmc/${h}.yaml`, `username: admin\npassword: ${BMC_PASSWORD}\n`);
  await w('mirror-workspace/cluster-resources/idms-oc-mirror.yaml', IDMS);
  await w('mirror-workspace/cluster-resources/itms-oc-mirror.yaml', ITMS);
  await w('mirror-workspace/cluster-resources/cs-redhat-operator-index-v4-17.yaml', CATALOG);
  await w('asc-os-images.yaml', OS_IMAGES);
  for (const f of ['site.yaml', 'site-dual.yaml']) await copyFile(join(EXAMPLES, f), join(dir, f));
}

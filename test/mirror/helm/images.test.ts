/**
 * Images a chart's install pulls that no `image:` field names: references in container args,
 * command and env values, and the images of hooks and test pods, each with how it was found.
 * Charts from the corpus (test/fixtures/helm/corpus/images.ts), rendered by the real engine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import { imagesOf, looksLikeImage, referencesIn } from '../../../src/mirror/helm/images.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { AirgapError } from '../../../src/util/errors.js';
import { writeChart, type ChartFiles } from '../../fixtures/helm/charts.js';
import {
  certManager,
  grafana,
  ingressNginx,
  kubePrometheusStack,
} from '../../fixtures/helm/corpus/images.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helm-images-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

let n = 0;
/** A chart's images as `image → [sources, onlyIn]`, and the first place of each. */
async function imagesOfChart(files: ChartFiles) {
  const dir = await writeChart(join(tmp, `chart-${n++}`), files);
  const found = imagesOf(renderChart(await loadChart(dir)).manifests);
  return {
    how: Object.fromEntries(found.map((i) => [i.image, [i.sources.join(','), i.onlyIn?.join(',') ?? '']])),
    where: Object.fromEntries(found.map((i) => [i.image, i.where])),
  };
}

describe('images in container args, command and env values', () => {
  it("finds the Prometheus operator's config-reloader and Thanos images in its args, and the certgen hook job", async () => {
    const { how, where } = await imagesOfChart(kubePrometheusStack());
    expect(how).toEqual({
      'quay.io/prometheus-operator/prometheus-operator:v0.93.1': ['image', ''],
      'quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1': ['args', ''],
      'quay.io/thanos/thanos:v0.37.2': ['args', ''],
      'registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.2': ['image,hook', 'hook'],
    });
    // The base images carry no tag (the operator adds the version): not images by themselves.
    expect(Object.keys(how).some((i) => i.includes('prometheus/prometheus'))).toBe(false);
    expect(where['quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1']).toBe(
      'kube-prometheus-stack/templates/prometheus-operator/deployment.yaml: Deployment/airgap-kube-prometheus-operator .spec.template.spec.containers[0].args[4]',
    );
  });

  it("finds cert-manager's ACME solver image in the controller's args and the startupapicheck hook", async () => {
    const { how, where } = await imagesOfChart(certManager());
    expect(how).toEqual({
      'quay.io/jetstack/cert-manager-controller:v1.16.2': ['image', ''],
      'quay.io/jetstack/cert-manager-acmesolver:v1.16.2': ['args', ''],
      'quay.io/jetstack/cert-manager-startupapicheck:v1.16.2': ['image,hook', 'hook'],
    });
    expect(where['quay.io/jetstack/cert-manager-acmesolver:v1.16.2']).toMatch(
      /cert-manager\/templates\/deployment\.yaml: Deployment\/airgap-cert-manager \.spec\.template\.spec\.containers\[0\]\.args\[3\]$/,
    );
  });

  it("keeps ingress-nginx's certgen image that only its pre- and post-install hook jobs name", async () => {
    const { how, where } = await imagesOfChart(ingressNginx());
    expect(how).toEqual({
      [`registry.k8s.io/ingress-nginx/controller:v1.12.1@sha256:${'d2fbc4ec'.repeat(8)}`]: ['image', ''],
      'registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.2': ['image,hook', 'hook'],
    });
    expect(where['registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.2']).toMatch(
      /job-createSecret\.yaml: Job\/airgap-ingress-nginx-admission-create /,
    );
  });

  it("says a test pod's image comes only from tests, and reads no URL, path or host:port in env as an image", async () => {
    const { how } = await imagesOfChart(grafana());
    expect(how).toEqual({
      'docker.io/library/busybox:1.31.1': ['image', ''],
      'docker.io/grafana/grafana:11.3.0': ['image', ''],
      'docker.io/bats/bats:v1.4.1': ['image,test', 'test'],
    });
  });

  it('reads a reference in a --flag=value, key=value, comma list, bare argument, command word and env value', async () => {
    const pod = (containers: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n${containers}`;
    const { how, where } = await imagesOfChart({
      'Chart.yaml': 'apiVersion: v2\nname: op\nversion: 0.1.0\n',
      'templates/pod.yaml': pod(
        [
          '    - name: op',
          '      image: quay.io/example/operator:v1',
          '      command: ["/manager", "-sidecar-image=ghcr.io/example/sidecar:2.0"]',
          '      args:',
          '        - --image=quay.io/example/worker@sha256:' + 'ab'.repeat(32),
          '        - RELATED_IMAGE_DB=registry.example.com:5000/example/db:15',
          '        - --extra-images=quay.io/example/a:1,quay.io/example/b:2,not-an-image',
          '        - --image',
          '        - localhost:5000/example/dev:latest',
          '      env:',
          '        - name: AGENT_IMAGES',
          '          value: 10.0.0.5:5000/example/agent:3.1,quay.io/example/a:1',
          '',
        ].join('\n'),
      ),
    });
    expect(how).toEqual({
      'quay.io/example/operator:v1': ['image', ''],
      'ghcr.io/example/sidecar:2.0': ['args', ''],
      [`quay.io/example/worker@sha256:${'ab'.repeat(32)}`]: ['args', ''],
      'registry.example.com:5000/example/db:15': ['args', ''],
      'quay.io/example/a:1': ['args,env', ''],
      'quay.io/example/b:2': ['args', ''],
      'localhost:5000/example/dev:latest': ['args', ''],
      '10.0.0.5:5000/example/agent:3.1': ['env', ''],
    });
    expect(where['ghcr.io/example/sidecar:2.0']).toBe(
      'op/templates/pod.yaml: Pod/p .spec.containers[0].command[1]',
    );
    expect(where['10.0.0.5:5000/example/agent:3.1']).toBe(
      'op/templates/pod.yaml: Pod/p .spec.containers[0].env[0].value',
    );
  });

  it('reads no URL, host:port, host:port/path, file path, untagged name or shell variable as an image', () => {
    const notImages = [
      'https://quay.io/example/app:v1',
      'tcp://redis.example.com:6379',
      'dns:///kubernetes.default.svc.cluster.local:443',
      'quay.io:443',
      '0.0.0.0:9090',
      'postgres.grafana.svc.cluster.local:5432',
      'registry.example.com:5000/healthz',
      'localhost:8080/metrics',
      'my-svc.ns.svc:8443/validate',
      '/etc/prometheus/config/prometheus.yaml',
      '/usr/local/certificates/cert',
      'conf.d/app.yaml:ro',
      'quay.io/prometheus/prometheus',
      'k8s.io/ingress-nginx',
      'kube-system/kubelet',
      '$(POD_NAMESPACE)/ingress-nginx-controller',
      '${REGISTRY}/example/app:v1',
      'nginx:1.27',
      'grafana-piechart-panel:1.6.4',
      'quay.io/Example/App:v1',
      'quay.io/example/app:v1 --debug',
    ];
    for (const v of notImages) {
      expect(looksLikeImage(v), v).toBe(false);
      expect(referencesIn(`--flag=${v}`), v).toEqual([]);
    }
    expect(
      referencesIn('--secret-field-selector=type!=kubernetes.io/dockercfg,type!=helm.sh/release.v1'),
    ).toEqual([]);
    expect(referencesIn('--dns01-recursive-nameservers=8.8.8.8:53,1.1.1.1:53')).toEqual([]);
    expect(referencesIn('--feature-gates=AdditionalCertificateOutputFormats=true')).toEqual([]);
    // A reference that is part of an item, not the whole item, is not read.
    expect(referencesIn('--images=reloader=quay.io/example/reloader:v1')).toEqual([]);
  });

  it('reads no image from a URL or host:port in an env value (the old rule took localhost:8080/metrics for one)', async () => {
    const { how } = await imagesOfChart({
      'Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\n',
      'templates/deploy.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: app',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: app',
        '          image: quay.io/example/app:v1',
        '          env:',
        '            - name: METRICS',
        '              value: localhost:8080/metrics',
        '            - name: WEBHOOK',
        '              value: webhook.example.com:8443/validate',
        '',
      ].join('\n'),
    });
    expect(Object.keys(how)).toEqual(['quay.io/example/app:v1']);
  });
});

describe('hooks and test pods', () => {
  const hookPod = (name: string, hook: string, image: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  annotations:\n    helm.sh/hook: "${hook}"\nspec:\n  containers:\n    - name: c\n      image: ${image}\n`;

  it('says which images only hooks or only test pods name, and leaves out a manifest whose hook Helm does not know', async () => {
    const { how } = await imagesOfChart({
      'Chart.yaml': 'apiVersion: v2\nname: hooks\nversion: 0.1.0\n',
      'templates/app.yaml':
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: c\n      image: quay.io/example/app:v1\n',
      'templates/both.yaml': [
        hookPod('migrate', ' Pre-Upgrade , pre-install', 'quay.io/example/migrate:v1'),
        hookPod('smoke', 'test-success', 'quay.io/example/app:v1'),
        hookPod('check', 'test,post-install', 'quay.io/example/check:v1'),
      ].join('---\n'),
      'templates/tests/conn.yaml': hookPod('conn', 'test', 'quay.io/example/curl:8'),
      'templates/typo.yaml': hookPod('typo', 'pre-instal', 'quay.io/example/never:v1'),
    });
    expect(how).toEqual({
      'quay.io/example/app:v1': ['image,test', ''],
      'quay.io/example/migrate:v1': ['image,hook', 'hook'],
      'quay.io/example/check:v1': ['image,hook,test', 'hook,test'],
      'quay.io/example/curl:8': ['image,test', 'test'],
    });
  });
});

describe('a rendered template that is not YAML', () => {
  it('names the template and the line of its output', async () => {
    const dir = await writeChart(join(tmp, 'badyaml'), {
      'Chart.yaml': 'apiVersion: v2\nname: badyaml\nversion: 0.1.0\n',
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  a: x\n   b: y\n',
    });
    let e: unknown;
    try {
      imagesOf(renderChart(await loadChart(dir)).manifests);
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(AirgapError);
    expect((e as AirgapError).code).toBe(MirrorError.HELM_MANIFEST_INVALID);
    // Helm's message counts the line in the document; where counts it in the whole output.
    expect((e as AirgapError).message).toMatch(
      /^YAML parse error on badyaml\/templates\/cm\.yaml: bad indentation of a mapping entry \(7:5\)\n/,
    );
    expect((e as AirgapError).where).toBe('badyaml/templates/cm.yaml:12');
  });
});

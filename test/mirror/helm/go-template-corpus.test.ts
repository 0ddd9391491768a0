/**
 * The Go text/template corners fixed by the conformance work, as a chart meets them: grafana-like
 * charts of our own (test/fixtures/helm/corpus/go-template.ts) rendered from a directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { AirgapError } from '../../../src/util/errors.js';
import { writeChart } from '../../fixtures/helm/charts.js';
import { GRAFANA_BANNER, GRAFANA_TWICE_DEFINED } from '../../fixtures/helm/corpus/go-template.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-gotmpl-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('grafana-like charts and Go text/template', () => {
  it('escapes unprintable runes for JavaScript and prints a map under %s as Go does', async () => {
    const chart = await loadChart(await writeChart(join(tmp, 'banner'), GRAFANA_BANNER));
    const [cm] = renderChart(chart, { releaseName: 'obs' }).manifests;
    expect(cm!.text).toContain("window.grafanaBanner = 'Authorised\\u200Buse\\u00A0only \\u003Cops\\u003E';");
    expect(cm!.text).toContain('limits.txt: "map[cpu:500m memory:256Mi replicas:%!s(float64=2)]"');
  });

  it('refuses a helper file that defines a name twice, naming the file and the template', async () => {
    const chart = await loadChart(await writeChart(join(tmp, 'twice'), GRAFANA_TWICE_DEFINED));
    let err: unknown;
    try {
      renderChart(chart);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AirgapError);
    expect((err as AirgapError).code).toBe(MirrorError.HELM_TEMPLATE_PARSE);
    expect((err as Error).message).toMatch(
      /^template: grafana\/templates\/_helpers\.tpl:\d+:\d+: template: multiple definition of template "grafana\.name"$/,
    );
  });
});

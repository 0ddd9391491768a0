import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSite, parseSite } from '../../../src/cluster/site/load.js';
import { readSiteInputs } from '../../../src/cluster/site/inputs.js';
import type { SiteProblem } from '../../../src/cluster/site/problems.js';
import { AirgapError } from '../../../src/util/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { rejection } from '../../helpers/realdata.js';
import { BMC_PASSWORD, EXAMPLES, PULL_AUTH, writeSiteFixture } from './fixture.js';
import { SiteErrorCode } from '../../../src/cluster/site/problems.js';

let dir: string;
let example: string;

beforeAll(async () => {
  dir = await tempDir('airgap-site-');
  await writeSiteFixture(dir);
  example = await readFile(join(EXAMPLES, 'site.yaml'), 'utf8');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The problems of a site text, as `site.yaml:line:column message — hint` strings. */
function problems(text: string): string[] {
  try {
    parseSite(text, 'site.yaml', dir);
  } catch (e) {
    if (!(e instanceof AirgapError)) throw e;
    expect(e.exitCode).toBe(2);
    const list = (e.details?.problems ?? []) as SiteProblem[];
    return list.map((p) => `${p.where} ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
  }
  return [];
}

/** The example with `from` replaced by `to` (which must occur). */
function edit(from: string, to: string, text = example): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

/** Line (1-based) of the first line containing `needle` in `text`. */
function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((l) => l.includes(needle)) + 1;
}

describe('example sites', () => {
  it('load from examples/ (files not checked there)', async () => {
    for (const f of ['site.yaml', 'site-dual.yaml']) {
      const site = await loadSite(join(EXAMPLES, f), { checkFiles: false });
      expect(site.kind).toBe('Site');
      expect(site.hosts).toHaveLength(2);
    }
  });

  it('load with every file they name, and their inputs read', async () => {
    const site = await loadSite(join(dir, 'site.yaml'));
    expect(site.cluster.pullSecretFile).toBe(join(dir, 'pull-secret.json'));
    expect(site.mirror.clusterResources).toBe(join(dir, 'mirror-workspace/cluster-resources'));
    const inputs = await readSiteInputs(site);
    expect(inputs.osImages).toHaveLength(1);
    expect(inputs.bmcCredentials['hosted-worker-0']).toEqual({ username: 'admin', password: BMC_PASSWORD });
    expect(inputs.mirrorSets.map((o) => o.metadata.name)).toEqual([
      'idms-release-0',
      'idms-operator-0',
      'itms-generic-0',
    ]);
    expect(inputs.catalogSources).toHaveLength(1);
    expect(inputs.imageContentSources).toContainEqual({
      source: 'quay.io/openshift-release-dev/ocp-release',
      mirrors: ['registry.lab.example.com:8443/openshift/release-images'],
    });
    // Tag mappings (ITMS) are not imageContentSources.
    expect(inputs.imageContentSources.map((i) => i.source)).not.toContain('registry.access.redhat.com/ubi9');
    expect(inputs.catalogOverrides.registryOverrides).toEqual([
      { source: 'registry.redhat.io/redhat', mirror: 'registry.lab.example.com:8443/redhat' },
    ]);
    expect(inputs.pullSecret).toContain(PULL_AUTH);

    const dual = await loadSite(join(dir, 'site-dual.yaml'));
    const dualInputs = await readSiteInputs(dual);
    expect(dualInputs.mirrorSets).toEqual([]);
    expect(dualInputs.imageContentSources).toHaveLength(2);
  });

  it('get the defaults', async () => {
    const site = await loadSite(join(dir, 'site.yaml'));
    expect(site.network).toMatchObject({
      stack: 'ipv4',
      networkType: 'OVNKubernetes',
      clusterNetwork: ['10.132.0.0/14'],
      serviceNetwork: ['172.31.0.0/16'],
    });
    expect(site.cluster).toMatchObject({
      namespace: 'clusters',
      olmCatalogPlacement: 'management',
      infraID: 'hosted',
      approveAgents: false,
    });
    expect(site.hosts[0]!.role).toBe('worker');
    const dual = await loadSite(join(dir, 'site-dual.yaml'));
    expect(dual.network.clusterNetwork).toEqual(['10.132.0.0/14', 'fd01::/48']);
    expect(dual.network.serviceNetwork).toEqual(['172.31.0.0/16', 'fd02::/112']);
    expect(dual.cluster.controlPlaneAvailability).toBe('HighlyAvailable');
    expect(dual.cluster.etcd.size).toBe('8Gi');
    expect(dual.hub).toMatchObject({
      databaseStorage: '10Gi',
      filesystemStorage: '100Gi',
      imageStorage: '10Gi',
    });
    const v6 = parseSite(
      edit(
        '192.168.125.10',
        "'fd00::10'",
        edit('stack: ipv4', 'stack: ipv6', edit('- 192.168.125.0/24', '- fd00::/64')),
      ),
      'site.yaml',
      dir,
    );
    expect(v6.network.clusterNetwork).toEqual(['fd01::/48']);
    expect(v6.network.serviceNetwork).toEqual(['fd02::/112']);
    expect(v6.cluster.services.apiServerAddress).toBe('fd00::10');
  });
});

describe('bad input: every problem with file:line:column and the field', () => {
  it('unknown fields, with did you mean', () => {
    const text = edit('  baseDomain: lab.example.com', '  baseDomian: lab.example.com');
    const p = problems(text);
    const line = lineOf(text, 'baseDomian');
    expect(p).toContainEqual(
      expect.stringMatching(
        new RegExp(`^site\\.yaml:${line}:3 unknown field cluster\\.baseDomian — did you mean baseDomain\\?`),
      ),
    );
    expect(p).toContainEqual(expect.stringMatching(/cluster\.baseDomain is required/));
  });

  it('wrong types', () => {
    const text = edit('      port: 8000', '      port: eight');
    const p = problems(text);
    expect(p).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'port: eight')}:\\d+ hosts\\[0\\]\\.bmc\\.port must be a whole number, not the string "eight"`,
        ),
      ),
    ]);
    const t2 = edit('  nodePool:\n    arch: amd64', '  nodePool:\n    arch: amd64\n  approveAgents: "yes"');
    expect(problems(t2)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(t2, 'approveAgents')}:18 cluster\\.approveAgents must be true or false, not the string "yes"`,
        ),
      ),
    ]);
  });

  it('cluster name: RFC 1123 label, and not "clusters"', () => {
    let text = edit('  name: hosted', '  name: Hosted_1');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'Hosted_1')}:9 cluster\\.name: "Hosted_1" is not an RFC 1123 label`,
        ),
      ),
    ]);
    text = edit('  name: hosted', '  name: clusters');
    expect(problems(text)).toEqual([
      expect.stringMatching(/^site\.yaml:7:9 cluster\.name: "clusters" cannot be a hosted cluster name/),
    ]);
  });

  it('duplicate host names and MACs (case-insensitive), bad MACs', () => {
    let text = edit('  - name: hosted-worker-1', '  - name: hosted-worker-0');
    expect(problems(text)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, '- name: hosted-worker-0') + 0}:|hosts\\[1\\]\\.name "hosted-worker-0" is also the name of hosts\\[0\\]`,
        ),
      ),
    );
    expect(problems(text).join('\n')).toMatch(
      /site\.yaml:\d+:\d+ hosts\[1\]\.name "hosted-worker-0" is also the name of hosts\[0\]/,
    );
    text = edit('    bootMACAddress: 52:54:00:aa:01:02', '    bootMACAddress: 52:54:00:AA:01:01');
    const p = problems(text).join('\n');
    expect(p).toMatch(
      new RegExp(
        `site\\.yaml:${lineOf(text, '52:54:00:AA:01:01')}:\\d+ hosts\\[1\\]\\.bootMACAddress 52:54:00:aa:01:01 is also used by hosts\\[0\\]\\.bootMACAddress`,
      ),
    );
    text = edit('    bootMACAddress: 52:54:00:aa:01:01', '    bootMACAddress: 52-54-00-aa-01-01');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, '52-54-00')}:21 hosts\\[0\\]\\.bootMACAddress "52-54-00-aa-01-01" is not a MAC address`,
        ),
      ),
    ]);
  });

  it('bad CIDRs, and CIDR families that do not match the stack', () => {
    let text = edit('    - 192.168.125.0/24', '    - 192.168.125.0/33');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, '/33')}:7 network\\.machineNetwork\\[0\\] "192\\.168\\.125\\.0/33" is not a CIDR`,
        ),
      ),
    ]);
    text = edit('    - 192.168.125.0/24', '    - 192.168.125.7/24');
    expect(problems(text).join()).toMatch(/host bits set/);
    text = edit('  stack: ipv4 #', '  clusterNetwork: [fd01::/48]\n  stack: ipv4 #');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'fd01::/48')}:\\d+ network\\.clusterNetwork\\[0\\] fd01::/48 is IPv6, but network\\.stack is ipv4`,
        ),
      ),
    ]);
    const dual = edit('  stack: ipv4 #', '  stack: dual\n  serviceNetwork: [fd02::/112, 172.31.0.0/16] #');
    expect(problems(dual).join()).toMatch(/network\.serviceNetwork lists the IPv6 network first/);
  });

  it('BMC: unbracketed IPv6 in a URL, unknown vendor, url with address', () => {
    let text = edit(
      '      vendor: idrac\n      address: 192.168.125.21',
      '      url: idrac-virtualmedia://fd00::21/redfish/v1/Systems/System.Embedded.1',
    );
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'url: idrac')}:12 hosts\\[1\\]\\.bmc\\.url: the IPv6 address in .* is not in brackets — write it as idrac-virtualmedia://\\[fd00::21\\]/`,
        ),
      ),
    ]);
    text = edit('      vendor: idrac', '      vendor: dell');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'vendor: dell')}:15 hosts\\[1\\]\\.bmc\\.vendor is "dell"; expected one of redfish,`,
        ),
      ),
    ]);
    text = edit('      vendor: idrac', '      vendor: idrak');
    expect(problems(text).join()).toMatch(/did you mean idrac\?/);
    text = edit('      vendor: idrac', '      url: ipmi://10.0.0.1');
    expect(problems(text).join()).toMatch(
      /hosts\[1\]\.bmc\.address cannot be given with hosts\[1\]\.bmc\.url/,
    );
  });

  it('release reference neither tag nor digest', () => {
    let text = edit('release-images:4.17.3-x86_64', 'release-images');
    expect(problems(text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^site\\.yaml:${lineOf(text, 'image: registry')}:12 cluster\\.release\\.image: .* has neither a tag nor a digest`,
        ),
      ),
    ]);
    text = edit('release-images:4.17.3-x86_64', 'release-images@sha256:abc');
    expect(problems(text).join()).toMatch(
      /cluster\.release\.image: invalid image reference .* is not a valid digest/,
    );
  });

  it('nodePort without apiServerAddress; both mirror sources; missing sections', () => {
    let text = edit('    apiServerAddress: 192.168.125.10 # a hub node the workers reach\n', '');
    expect(problems(text).join()).toMatch(
      /site\.yaml:\d+:\d+ cluster\.services\.apiServerAddress is required with publishing: nodePort/,
    );
    text = edit('  clusterResources:', '  imageContentSources: []\n  clusterResources:');
    expect(problems(text).join()).toMatch(
      /mirror\.imageContentSources and mirror\.clusterResources cannot both be given/,
    );
    expect(problems('apiVersion: airgap.openshift.io/v1alpha1\nkind: Site\n')).toEqual([
      expect.stringMatching(/^site\.yaml:1:1 cluster is required/),
      expect.stringMatching(/^site\.yaml:1:1 network is required/),
      expect.stringMatching(/^site\.yaml:1:1 mirror is required/),
    ]);
    expect(problems(edit('kind: Site', 'kind: Cluster')).join()).toMatch(
      /^site\.yaml:4:7 kind Cluster is not Site/,
    );
  });

  it('a missing required field inside a section is reported, not a crash', () => {
    const noRelease = edit(
      '  release:\n    # In the mirror, by tag or digest: airgap resolves a tag to its digest before rendering.\n    image: registry.lab.example.com:8443/openshift/release-images:4.17.3-x86_64\n',
      '',
    );
    expect(problems(noRelease)).toEqual([
      expect.stringMatching(/^site\.yaml:\d+:\d+ cluster\.release is required/),
    ]);
    const noInterfaces = edit(
      '      interfaces:\n        - name: eno1\n          macAddress: 52:54:00:aa:01:02\n      config:',
      '      config:',
    );
    expect(problems(noInterfaces)).toEqual([
      expect.stringMatching(/^site\.yaml:\d+:\d+ hosts\[1\]\.network\.interfaces is required/),
    ]);
  });

  it('YAML syntax errors have a line', () => {
    try {
      parseSite('cluster:\n  name: [a\n', 'site.yaml');
      expect.unreachable();
    } catch (e) {
      expect((e as AirgapError).code).toBe(SiteErrorCode.Yaml);
      expect((e as AirgapError).where).toMatch(/^site\.yaml:\d+:\d+$/);
    }
  });

  it('missing files name the field that named them', async () => {
    const text = edit(
      'credentialsFile: bmc/hosted-worker-1.yaml',
      'credentialsFile: bmc/nope.yaml',
      edit('pullSecretFile: pull-secret.json', 'pullSecretFile: nope.json'),
    );
    const f = join(dir, 'missing-files.yaml');
    await writeFile(f, text);
    const e = await rejection(loadSite(f));
    expect(e.exitCode).toBe(2);
    const p = (e.details!.problems as SiteProblem[]).map((x) => `${x.where} ${x.message}`);
    expect(p).toEqual([
      expect.stringMatching(
        new RegExp(
          `missing-files\\.yaml:${lineOf(text, 'nope.json')}:\\d+ cluster\\.pullSecretFile names .*nope\\.json, but it does not exist`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `missing-files\\.yaml:${lineOf(text, 'bmc/nope.yaml')}:\\d+ hosts\\[1\\]\\.bmc\\.credentialsFile names .*nope\\.yaml, but it does not exist`,
        ),
      ),
    ]);
  });

  it('bad file contents point at the field, and never show a secret', async () => {
    await writeFile(join(dir, 'bmc/bad.yaml'), `user: admin\npassword: ${BMC_PASSWORD}\n`);
    await writeFile(
      join(dir, 'id_private'),
      '-----BEGIN OPENSSH PRIVATE KEY-----\nsecretstuff\n-----END OPENSSH PRIVATE KEY-----\n',
    );
    const text = edit(
      'credentialsFile: bmc/hosted-worker-1.yaml',
      'credentialsFile: bmc/bad.yaml',
      edit('sshKeyFile: id_ed25519.pub', 'sshKeyFile: id_private'),
    );
    const f = join(dir, 'bad-contents.yaml');
    await writeFile(f, text);
    const e = await rejection(readSiteInputs(await loadSite(f)));
    const all = `${e.message} ${JSON.stringify(e.details)}`;
    expect(all).toMatch(
      new RegExp(
        `bad-contents\\.yaml:${lineOf(text, 'id_private')}:\\d+: cluster\\.sshKeyFile: .* is a private key`,
      ),
    );
    expect(all).toMatch(
      new RegExp(
        `bad-contents\\.yaml:${lineOf(text, 'bmc/bad.yaml')}:\\d+: hosts\\[1\\]\\.bmc\\.credentialsFile: .* has no username`,
      ),
    );
    expect(all).not.toContain(BMC_PASSWORD);
    expect(all).not.toContain('secretstuff');
  });
});

describe('a file that is not a site', () => {
  it('is named as such, its header first, and its content is never quoted', async () => {
    const passwd = join(dir, 'passwd');
    await writeFile(passwd, 'root:x:0:0:hunter2-content:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n');
    const e = await rejection(loadSite(passwd));
    expect([e.exitCode, e.code]).toEqual([2, SiteErrorCode.Kind]);
    expect(e.message).toBe(
      `${passwd} holds a string, not a site (a mapping with apiVersion, kind, cluster, network, mirror and hosts)`,
    );
    // Another kind of YAML (an ImageSetConfiguration): the header is what is reported, nothing inside.
    const isc = problems(
      'kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  additionalImages: [{ name: "hunter2" }]\n',
    );
    expect(isc).toEqual([
      expect.stringMatching(/^site\.yaml:1:7 kind ImageSetConfiguration is not Site/),
      expect.stringMatching(/^site\.yaml:2:13 apiVersion mirror\.openshift\.io\/v2alpha1 is not /),
    ]);
    expect(isc.join()).not.toContain('hunter2');
  });
});

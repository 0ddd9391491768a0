/** `airgap registry status` for people: one screen, a label per part, columns aligned. */
import { formatBytes } from '../util/progress.js';
import type { AddressStatus, CertificateStatus, RegistryStatus } from './status.js';

const LABEL = 10;

/** Lines under one label: the label on the first, the rest indented to the same column. */
function section(label: string, lines: string[]): string[] {
  return lines.map((l, i) => `${(i === 0 ? label : '').padEnd(LABEL)}${l}`);
}

/** Rows of cells, each column padded to its widest cell. */
function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

function serviceLines(s: RegistryStatus): string[] {
  const { service: v, name } = s;
  const unit = v.unit
    ? v.unit.load === 'not-found'
      ? `${name}.service: not installed`
      : `${name}.service: ${v.unit.active} (${v.unit.sub})${v.unit.result && v.unit.result !== 'success' ? `, result ${v.unit.result}` : ''}, ${v.unit.enabled || 'enablement unknown'}, ${v.unit.restarts} restart(s)`
    : `${name}.service: unknown (${v.unitError ?? ''})`;
  const container =
    v.container === null
      ? `container ${name}: unknown (${v.containerError ?? ''})`
      : `container ${name}: ${v.container ? 'running' : 'not running'}`;
  return [unit, container];
}

const STATE_WORDS: Record<AddressStatus['state'], string> = {
  answers: 'answers, trusted',
  'not-trusted': 'NOT TRUSTED',
  refused: 'REFUSED',
  'no-answer': 'NO ANSWER',
  unresolved: 'DOES NOT RESOLVE',
  error: 'ERROR',
};

function addressLines(s: RegistryStatus): string[] {
  if (!s.addresses.length) return ['none'];
  return table(
    s.addresses.map((a) => [a.address, a.ip ?? '', `${STATE_WORDS[a.state]}${a.why ? `: ${a.why}` : ''}`]),
  );
}

function expiryWords(c: CertificateStatus): string {
  const left = c.expiry === 'expired' ? `EXPIRED ${-c.daysLeft} day(s) ago` : `${c.daysLeft} day(s) left`;
  return `until ${c.notAfter.slice(0, 10)}  ${left}${c.expiry === 'expiring' ? ' (renew soon)' : ''}`;
}

function certificateLines(s: RegistryStatus): string[] {
  const c = s.certificates;
  const rows: string[][] = [['leaf (file)', c.leaf.subject, expiryWords(c.leaf)]];
  if (!c.served) rows.push(['leaf (served)', 'none: no address answered', '']);
  else if (c.served.sameAsFile) rows.push(['leaf (served)', 'the same certificate', '']);
  else rows.push(['leaf (served)', `${c.served.subject} (NOT the file's)`, expiryWords(c.served)]);
  for (const ca of c.cas) rows.push(['CA', ca.subject, expiryWords(ca)]);
  return table(rows);
}

function storageLine(s: RegistryStatus): string {
  const st = s.storage;
  if (!st.exists) return `${st.dataDir}: DOES NOT EXIST`;
  const used = st.complete
    ? `${formatBytes(st.usedBytes)} in ${st.files} file(s)`
    : `INCOMPLETE (${st.error ?? ''}); at least ${formatBytes(st.usedBytes)}`;
  const free = st.free
    ? `${formatBytes(st.free.availableBytes)} free of ${formatBytes(st.free.totalBytes)}`
    : `free space unknown (${st.freeError ?? ''})`;
  return `${st.dataDir}: ${used}; ${free}`;
}

function imageLines(s: RegistryStatus): string[] {
  const i = s.images;
  if (i.state === 'skipped') return [`not counted: ${i.why ?? ''}`];
  const head =
    i.state === 'counted'
      ? `${i.tags} tag(s) in ${i.repositories} repositories`
      : `INCOMPLETE: ${i.why ?? ''}`;
  const plural = (n: number) => (n === 1 ? 'repository' : 'repositories');
  return [
    head,
    ...table(
      i.prefixes.map((p) => [
        `  ${p.prefix}/…`,
        `${p.tags} tag(s) in ${p.repositories} ${plural(p.repositories)}`,
      ]),
    ),
    ...i.errors.slice(0, 5).map((e) => `  error: ${e}`),
    ...(i.errors.length > 5 ? [`  … and ${i.errors.length - 5} more error(s)`] : []),
  ];
}

function hubLines(s: RegistryStatus): string[] {
  if (!s.hub) return ['not checked (give --kubeconfig)'];
  const words = {
    holds: 'holds this CA',
    'other-ca': 'DOES NOT HOLD this CA',
    'no-key': 'HAS NO KEY',
    absent: 'ABSENT',
    error: 'ERROR',
  };
  return table(
    s.hub.configMaps.map((m) => [
      `${m.namespace}/${m.name}`,
      m.key,
      `${words[m.state]}${m.why ? `: ${m.why}` : ''}`,
    ]),
  );
}

/** The whole status as text (ends with a newline). */
export function formatRegistryStatus(s: RegistryStatus): string {
  const lines = [
    `${'registry'.padEnd(LABEL)}${s.registry}  (${s.dir})  ${s.healthy ? 'healthy' : 'NOT HEALTHY'}`,
    ...section('service', serviceLines(s)),
    ...section('addresses', addressLines(s)),
    ...section('certs', certificateLines(s)),
    ...section('storage', [storageLine(s)]),
    ...section('images', imageLines(s)),
    ...section('deletes', [
      s.deletes.enabled === null
        ? `unknown (${s.deletes.error ?? ''})`
        : s.deletes.enabled
          ? 'enabled'
          : 'disabled',
    ]),
    ...section('hub', hubLines(s)),
  ];
  if (s.service.log.length)
    lines.push('', `last log lines (journalctl -u ${s.name}):`, ...s.service.log.map((l) => `  ${l}`));
  if (s.problems.length) lines.push('', 'problems:', ...s.problems.map((p) => `  - ${p}`));
  if (s.warnings.length) lines.push('', 'warnings:', ...s.warnings.map((w) => `  - ${w}`));
  return `${lines.join('\n')}\n`;
}

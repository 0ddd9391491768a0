import type { CertificateInfo } from './inspect.js';
import type { WrittenCertificate } from './issue.js';

/** A certificate for people: what, for whom, until when. */
export function renderInfo(i: CertificateInfo, title?: string): string {
  const names = [...i.dnsNames, ...i.ipAddresses];
  const lines = [
    ...(title ? [`${title}:`] : []),
    `subject  ${i.subject}${i.isCA ? '  (CA)' : ''}`,
    `issuer   ${i.selfSigned ? '(self-signed)' : i.issuer}`,
    `valid    ${i.notBefore} → ${i.notAfter} (${i.daysLeft >= 0 ? `${i.daysLeft} days left` : `expired ${-i.daysLeft} days ago`})`,
    `key      ${i.keyType}`,
  ];
  if (names.length > 0) lines.push(`names    ${names.join(', ')}`);
  lines.push(`sha256   ${i.sha256Fingerprint}`);
  return lines.join('\n');
}

/** What `certs ca` / `certs issue` wrote. */
export function renderCertificate(r: WrittenCertificate): string {
  const lines = [renderInfo(r.certificate), ''];
  for (const [what, path] of Object.entries(r.files)) lines.push(`wrote ${what.padEnd(11)} ${path}`);
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}

/** Small network syntax checks for the site file: CIDRs, MAC addresses, addresses. */
import { isIP } from 'node:net';
import { hostNameProblem } from '../../certs/index.js';

export interface Cidr {
  family: 4 | 6;
  address: string;
  prefix: number;
}

function ipv4ToBigInt(a: string): bigint {
  return a.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
}

function ipv6ToBigInt(a: string): bigint {
  let text = a;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipv4ToBigInt(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

/** Parse `address/prefix`; returns the parts, or why it is not a network in CIDR notation. */
export function parseCidr(text: string): Cidr | { error: string } {
  const slash = text.indexOf('/');
  if (slash < 0) return { error: 'it has no "/prefix" (write it like 10.132.0.0/14 or fd01::/48)' };
  const address = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const family = isIP(address);
  if (family === 0) return { error: `"${address}" is not an IPv4 or IPv6 address` };
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
    return { error: `"/${prefixText}" is not a prefix length (0 to ${max})` };
  const prefix = Number(prefixText);
  const value = family === 4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  const hostBits = BigInt(max - prefix);
  if (hostBits > 0n && (value & ((1n << hostBits) - 1n)) !== 0n)
    return { error: `it has host bits set after /${prefix} (give the network address)` };
  return { family: family as 4 | 6, address, prefix };
}

const MAC_RE = /^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$/;

/** Whether `mac` is six colon-separated hex pairs (the pattern the NMStateConfig CRD enforces). */
export function isMacAddress(mac: string): boolean {
  return MAC_RE.test(mac);
}

/** An address without the brackets an IPv6 literal may be written with. */
export function unbracket(address: string): string {
  return address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
}

/** Why `address` is not a host name, IPv4 or IPv6 literal (brackets allowed around IPv6), or undefined. */
export function addressProblem(address: string): string | undefined {
  const bare = unbracket(address);
  if (bare !== address && isIP(bare) !== 6) return `"${bare}" in brackets is not an IPv6 address`;
  if (isIP(bare) !== 0) return undefined;
  if (/^[0-9.]+$/.test(bare)) return `"${bare}" is not an IPv4 address`;
  if (bare.includes(':')) return `"${bare}" is not an IPv6 address`;
  return hostNameProblem(bare);
}

/**
 * Host names and registry hosts, checked one way for every certs command: RFC 1123 names (labels of
 * 1–63 letters, digits and inner hyphens, 253 characters at most), IPv4, and IPv6 (in brackets
 * wherever a port may follow). Also a host and a port given as separate flags (`certs registry`).
 */
import { isIP } from 'node:net';
import { usageError, CommonError } from '../util/errors.js';

const LABEL_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why `name` is not an RFC 1123 host name, or undefined when it is one. `*.` as the first label only with `wildcard`. */
export function hostNameProblem(name: string, opts: { wildcard?: boolean } = {}): string | undefined {
  if (name === '') return 'it is empty';
  if (name.length > 253) return 'a host name has at most 253 characters';
  if (name.endsWith('.')) return 'remove the final dot';
  const labels = name.split('.');
  const rest = opts.wildcard && labels[0] === '*' ? labels.slice(1) : labels;
  if (rest.length < labels.length && rest.length < 2)
    return 'a wildcard needs at least two labels after it (*.apps.example.com)';
  for (const label of rest) {
    if (label === '') return `"${name}" has an empty label (two dots in a row, or a dot at an end)`;
    if (!LABEL_RE.test(label))
      return `"${label}" is not a valid host name label (letters, digits and inner hyphens, 1 to 63 characters)`;
  }
  if (/^\d+$/.test(rest[rest.length - 1]!)) return 'it looks like an IP address but is not one';
  return undefined;
}

/** A registry host as image references name it: `host`, `host:port`, `[v6]`, `[v6]:port`. */
export interface HostPort {
  /** The host without port: a DNS name, an IPv4 literal, or a bracketed IPv6 literal (`[fd00::1]`). */
  host: string;
  port?: number;
  ipv6: boolean;
}

/** Parse `host[:port]`; returns the parts, or why it is not one. */
export function parseHostPort(text: string): HostPort | { error: string } {
  let host = text;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return { error: 'an IPv6 address needs its closing "]"' };
    host = text.slice(0, close + 1);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return { error: `unexpected "${rest}" after the IPv6 address` };
      portText = rest.slice(1);
    }
    if (isIP(host.slice(1, -1)) !== 6) return { error: `"${host.slice(1, -1)}" is not an IPv6 address` };
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
      if (portText.includes(':'))
        return { error: 'an IPv6 address must be in brackets, like [fd00::1]:5000' };
    }
    if (host === '') return { error: 'the host is empty' };
    if (/^[0-9.]+$/.test(host)) {
      if (isIP(host) !== 4) return { error: `"${host}" is not an IPv4 address` };
    } else {
      const problem = hostNameProblem(host);
      if (problem) return { error: problem };
    }
  }
  if (portText === undefined) return { host, ipv6: host.startsWith('[') };
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535)
    return { error: `"${portText}" is not a port (1 to 65535)` };
  return { host, port: Number(portText), ipv6: host.startsWith('[') };
}

/** A host name or address as given on the command line, checked. */
export interface CheckedHost {
  /** The name, or the IP address without brackets. */
  host: string;
  ip: boolean;
  /** As it goes before `:port` in a reference: `registry.example.com`, `10.0.0.5`, `[fd00::5]`. */
  display: string;
}

/**
 * Check a host name (RFC 1123: dot-separated labels of letters, digits and inner hyphens, each at
 * most 63 characters, at most 253 in all, the last label not all digits) or an IP address (IPv6
 * with or without brackets). Throws a usage error naming `flag`.
 */
export function checkHost(input: string, flag: string): CheckedHost {
  const bare = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const kind = isIP(bare);
  if (kind === 6) return { host: bare, ip: true, display: `[${bare}]` };
  if (kind === 4 && bare === input) return { host: bare, ip: true, display: bare };
  const bad = (why: string): never => {
    throw usageError(CommonError.FLAG_INVALID, `${flag} "${input}" is not a valid host name: ${why}`, {
      hint: `give a DNS name like registry.example.com, an IPv4 address, or an IPv6 address like fd00::5`,
    });
  };
  if (input !== bare) bad('only an IPv6 address goes in brackets');
  const problem = hostNameProblem(input);
  if (problem) bad(problem);
  return { host: input, ip: false, display: input };
}

/** Check a TCP port given as a number or a string: a whole number from 1 to 65535. */
export function checkPort(input: number | string, flag: string): number {
  const text = String(input).trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw usageError(CommonError.FLAG_INVALID, `${flag} "${String(input)}" is not a TCP port`, {
      hint: 'give a whole number from 1 to 65535, e.g. 5000',
    });
  }
  return port;
}

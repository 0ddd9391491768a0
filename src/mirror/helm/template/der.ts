/**
 * Just enough DER (ASN.1) to write the X.509 certificates sprig's genCA/genSelfSignedCert/
 * genSignedCert make, and to read back the parts of a certificate or key they need (a CA's
 * subject, a DSA key's numbers).
 */

/** A DER element: tag, then length, then content. */
export function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

export const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
export const explicit = (n: number, item: Buffer) => tlv(0xa0 | n, item);
export const octets = (b: Buffer) => tlv(0x04, b);
export const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
export const NULL = Buffer.from([0x05, 0x00]);
export const TRUE = Buffer.from([0x01, 0x01, 0xff]);

/** An INTEGER from a non-negative bigint (a leading zero byte where the top bit is set). */
export function integer(v: bigint): Buffer {
  let hex = v.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let b = Buffer.from(hex, 'hex');
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [a! * 40 + b!];
  for (const n of rest) {
    const chunk: number[] = [];
    let v = n;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A string as Go's asn1 writes one: PrintableString when it can be, else UTF8String. */
export function text(s: string): Buffer {
  return tlv(/^[A-Za-z0-9 '()+,\-./:=?*]*$/.test(s) ? 0x13 : 0x0c, Buffer.from(s));
}

/** A time as X.509 wants it: UTCTime for 1950–2049, GeneralizedTime otherwise. */
export function time(d: Date): Buffer {
  const iso = d.toISOString();
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const y = d.getUTCFullYear();
  return y >= 1950 && y < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

/** One element read back: its tag, its content, and where the next one starts. */
export interface Element {
  tag: number;
  content: Buffer;
  /** The whole element (tag and length too). */
  raw: Buffer;
  end: number;
}

/** Read the element at `at` (an error for DER that is cut short). */
export function read(buf: Buffer, at = 0): Element {
  const bad = () => new Error('malformed DER');
  if (at + 2 > buf.length) throw bad();
  const tag = buf[at]!;
  let len = buf[at + 1]!;
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > buf.length) throw bad();
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > buf.length) throw bad();
  return { tag, content: buf.subarray(start, end), raw: buf.subarray(at, end), end };
}

/** The elements inside a SEQUENCE (or SET) content. */
export function children(content: Buffer): Element[] {
  const out: Element[] = [];
  for (let at = 0; at < content.length;) {
    const e = read(content, at);
    out.push(e);
    at = e.end;
  }
  return out;
}

/** An INTEGER's value. */
export const bigintOf = (e: Element) => BigInt(`0x${e.content.toString('hex') || '0'}`);

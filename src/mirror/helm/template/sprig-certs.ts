/**
 * Sprig's key and certificate generators (sprig.ts): genPrivateKey, genCA, genSelfSignedCert,
 * genSignedCert (and their *WithKey forms), buildCustomCert. As `helm template` does, they make
 * real keys and real certificates (x509.CreateCertificate's shape: v3, a random 128-bit serial,
 * the common name, SANs, key usages, basic constraints), so a chart that reads them back
 * (`.Cert | b64enc`, `buildCustomCert`) gets what Helm gives. A key costs time, and is paid for
 * from the budget (budget.ts) like the steps it takes.
 */
import {
  X509Certificate,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { goInt, goString } from './convert.js';
import * as der from './der.js';
import { f, type Add } from './sprig-def.js';
import { GoStruct, isNil, typeOf } from './values.js';

/**
 * What generating a key costs in template steps: an RSA 2048 key takes about 100 ms, 20 of them
 * half the budget; genPrivateKey's RSA 4096 about a second, 5 of them the whole budget.
 */
const KEY_STEPS = 500_000;
const BIG_KEY_STEPS = 2_000_000;

const pem = (type: string, body: Buffer) =>
  `-----BEGIN ${type}-----\n${body
    .toString('base64')
    .replace(/.{64}/g, '$&\n')
    .replace(/\n?$/, '\n')}-----END ${type}-----\n`;

/** A DSA key as Go's sprig writes it: SEQUENCE { 0, P, Q, G, Y, X } (from Node's PKCS#8). */
function dsaPem(key: KeyObject): string {
  const info = der.children(der.read(key.export({ type: 'pkcs8', format: 'der' })).content);
  const [p, q, g] = der.children(der.children(info[1]!.content)[1]!.content).map(der.bigintOf);
  const x = der.bigintOf(der.read(info[2]!.content));
  let y = 1n;
  for (let base = g! % p!, e = x; e > 0n; e >>= 1n, base = (base * base) % p!)
    if (e & 1n) y = (y * base) % p!;
  return pem('DSA PRIVATE KEY', der.seq(...[0n, p!, q!, g!, y, x].map(der.integer)));
}

/** sprig's pemBlockForKey: RSA as PKCS#1, EC as SEC 1, DSA as its own, the rest as PKCS#8. */
function keyPem(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return key.export({ type: 'pkcs1', format: 'pem' }) as string;
    case 'ec':
      return key.export({ type: 'sec1', format: 'pem' }) as string;
    case 'dsa':
      return dsaPem(key);
    default:
      return key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }
}

/** sprig's genPrivateKey: a new key as PEM, or "Unknown type …" (text, not an error). */
function genPrivateKey(kind: string): string {
  switch (kind) {
    case '':
    case 'rsa':
      return keyPem(generateKeyPairSync('rsa', { modulusLength: 4096 }).privateKey);
    case 'dsa':
      return keyPem(generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 }).privateKey);
    case 'ecdsa':
      return keyPem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    case 'ed25519':
      return keyPem(generateKeyPairSync('ed25519').privateKey);
    default:
      return `Unknown type ${kind}`;
  }
}

/** sprig's parsePrivateKeyPEM, with its errors. */
function parseKey(text: string): KeyObject {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text);
  if (!m) throw new Error('parsing private key: no PEM data in input');
  if (m[1] !== 'PRIVATE KEY' && !m[1]!.endsWith(' PRIVATE KEY'))
    throw new Error(`parsing private key: no private key data in PEM block of type ${m[1]}`);
  try {
    return createPrivateKey(text);
  } catch (e) {
    throw new Error(`parsing private key: ${(e as Error).message}`, { cause: e });
  }
}

/** The signature algorithm Go picks for a signing key, and how Node signs with it. */
function signer(key: KeyObject): { alg: Buffer; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { alg: der.seq(der.oid('1.2.840.113549.1.1.11'), der.NULL), hash: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { alg: der.seq(der.oid('1.2.840.10045.4.3.3')), hash: 'sha384' };
      if (curve === 'secp521r1') return { alg: der.seq(der.oid('1.2.840.10045.4.3.4')), hash: 'sha512' };
      return { alg: der.seq(der.oid('1.2.840.10045.4.3.2')), hash: 'sha256' };
    }
    case 'ed25519':
      return { alg: der.seq(der.oid('1.3.101.112')), hash: null };
    default:
      throw new Error('error creating certificate: x509: only RSA, ECDSA and Ed25519 keys supported');
  }
}

interface CertSpec {
  cn: string;
  ips: string[];
  dns: string[];
  days: bigint;
  ca: boolean;
}

/** A certificate's subject Name (just a common name, as sprig's templates have). */
const nameOf = (cn: string) =>
  cn === '' ? der.seq() : der.seq(der.set(der.seq(der.oid('2.5.4.3'), der.text(cn))));

/** The extensions Go writes for sprig's template, in Go's order. */
function extensions(spec: CertSpec, spki: Buffer): Buffer {
  const ext = (id: string, value: Buffer, critical = false) =>
    der.seq(der.oid(id), ...(critical ? [der.TRUE] : []), der.octets(value));
  const out = [
    ext('2.5.29.15', spec.ca ? der.bits(Buffer.from([0xa4]), 2) : der.bits(Buffer.from([0xa0]), 5), true),
    ext('2.5.29.37', der.seq(der.oid('1.3.6.1.5.5.7.3.1'), der.oid('1.3.6.1.5.5.7.3.2'))),
    ext('2.5.29.19', spec.ca ? der.seq(der.TRUE) : der.seq(), true),
  ];
  if (spec.ca) {
    const key = der.children(der.read(spki).content)[1]!.content.subarray(1);
    out.push(ext('2.5.29.14', der.octets(createHash('sha1').update(key).digest())));
  }
  if (spec.ips.length > 0 || spec.dns.length > 0) {
    const names = [
      ...spec.dns.map((d) => der.tlv(0x82, Buffer.from(d))),
      ...spec.ips.map((ip) => der.tlv(0x87, ipBytes(ip))),
    ];
    out.push(ext('2.5.29.17', der.seq(...names)));
  }
  return der.explicit(3, der.seq(...out));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.from(all.map((g) => g.padStart(4, '0')).join(''), 'hex');
}

/** x509.CreateCertificate of sprig's template for `subjectKey`, signed by `issuer`. */
function createCertificate(
  spec: CertSpec,
  subjectKey: KeyObject,
  issuer: { name: Buffer; key: KeyObject },
): string {
  const spki = createPublicKey(subjectKey).export({ type: 'spki', format: 'der' });
  const { alg, hash } = signer(issuer.key);
  const now = new Date();
  const notAfter = new Date(now.getTime() + Number(spec.days) * 86_400_000);
  const serial = BigInt(`0x${randomBytes(16).toString('hex')}`);
  const tbs = der.seq(
    der.explicit(0, der.integer(2n)),
    der.integer(serial),
    alg,
    issuer.name,
    der.seq(der.time(now), der.time(notAfter)),
    nameOf(spec.cn),
    spki,
    extensions(spec, spki),
  );
  const signature = sign(hash, tbs, issuer.key);
  return pem('CERTIFICATE', der.seq(tbs, alg, der.bits(signature)));
}

/** A `[]interface{}` parameter of strings (ips, alternateDNS); nil is none. */
function strings(v: unknown, what: string): string[] {
  if (isNil(v)) return [];
  if (!Array.isArray(v)) throw new Error(`wrong type for value; expected []interface {}; got ${typeOf(v)}`);
  return v.map((x) => {
    if (typeof x !== 'string') throw new Error(`error parsing ${what}: ${String(x)} is not a string`);
    return x;
  });
}

/** sprig's getNetIPs: each an IP address. */
function ips(v: unknown): string[] {
  return strings(v, 'ip').map((ip) => {
    if (isIP(ip) === 0) throw new Error(`error parsing ip: ${ip}`);
    return ip;
  });
}

/** The certificate (Cert and Key) sprig's functions return. */
const certificate = (cert: string, key: string) =>
  new GoStruct('sprig.certificate', { Cert: cert, Key: key });

/** A `certificate` parameter: what genCA gave, else Go's error. */
function caOf(v: unknown): { name: Buffer; key: KeyObject } {
  if (!(v instanceof GoStruct) || v.typeName !== 'sprig.certificate')
    throw new Error(`wrong type for value; expected sprig.certificate; got ${typeOf(v)}`);
  let raw: Buffer;
  try {
    raw = new X509Certificate(String(v.fields['Cert'])).raw;
  } catch (e) {
    throw new Error(`error parsing certificate: decodedSignerCert.Bytes: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const tbs = der.children(der.read(raw).content)[0]!;
  const fields = der.children(tbs.content);
  const subject = fields[fields[0]!.tag === 0xa0 ? 5 : 4]!.raw;
  return { name: Buffer.from(subject), key: parseKey(String(v.fields['Key'])) };
}

const newRsaKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

/** genCA and genCAWithKey: a self-signed CA for `cn`, valid `days` days. */
function genCA(cn: unknown, days: unknown, key?: KeyObject): GoStruct {
  const spec = { cn: goString(cn), ips: [], dns: [], days: goInt(days), ca: true };
  const k = key ?? newRsaKey();
  return certificate(createCertificate(spec, k, { name: nameOf(spec.cn), key: k }), keyPem(k));
}

/** genSelfSignedCert and its WithKey form. */
function genSelfSigned(cn: unknown, ip: unknown, dns: unknown, days: unknown, key?: KeyObject): GoStruct {
  const spec = { cn: goString(cn), ips: ips(ip), dns: strings(dns, 'dns'), days: goInt(days), ca: false };
  const k = key ?? newRsaKey();
  return certificate(createCertificate(spec, k, { name: nameOf(spec.cn), key: k }), keyPem(k));
}

/** genSignedCert and its WithKey form: a certificate for `cn` signed by the CA. */
function genSigned(
  cn: unknown,
  ip: unknown,
  dns: unknown,
  days: unknown,
  ca: unknown,
  key?: KeyObject,
): GoStruct {
  const issuer = caOf(ca);
  const spec = { cn: goString(cn), ips: ips(ip), dns: strings(dns, 'dns'), days: goInt(days), ca: false };
  const k = key ?? newRsaKey();
  return certificate(createCertificate(spec, k, issuer), keyPem(k));
}

/** sprig's buildCustomCert: a certificate from base64 PEM texts, each checked. */
function buildCustomCert(cert: unknown, key: unknown): GoStruct {
  const c = Buffer.from(goString(cert), 'base64').toString();
  const k = Buffer.from(goString(key), 'base64').toString();
  if (!c.includes('-----BEGIN')) throw new Error('unable to decode certificate');
  try {
    new X509Certificate(c);
  } catch (e) {
    throw new Error(`error parsing certificate: decodedCert.Bytes: ${(e as Error).message}`, { cause: e });
  }
  parseKey(k);
  return certificate(c, k);
}

/** Add genPrivateKey, genCA, genSelfSignedCert, genSignedCert (and *WithKey), buildCustomCert. */
export function addCertFunctions(add: Add): void {
  add(
    'genPrivateKey',
    f(
      1,
      1,
      (t: unknown) => genPrivateKey(goString(t)),
      () => BIG_KEY_STEPS,
    ),
  );
  add(
    'genCA',
    f(
      2,
      2,
      (cn: unknown, d: unknown) => genCA(cn, d),
      () => KEY_STEPS,
    ),
  );
  add(
    'genCAWithKey',
    f(3, 3, (cn: unknown, d: unknown, k: unknown) => genCA(cn, d, parseKey(goString(k)))),
  );
  add(
    'genSelfSignedCert',
    f(
      4,
      4,
      (cn: unknown, ip: unknown, dns: unknown, d: unknown) => genSelfSigned(cn, ip, dns, d),
      () => KEY_STEPS,
    ),
  );
  add(
    'genSelfSignedCertWithKey',
    f(5, 5, (cn: unknown, ip: unknown, dns: unknown, d: unknown, k: unknown) =>
      genSelfSigned(cn, ip, dns, d, parseKey(goString(k))),
    ),
  );
  add(
    'genSignedCert',
    f(
      5,
      5,
      (cn: unknown, ip: unknown, dns: unknown, d: unknown, ca: unknown) => genSigned(cn, ip, dns, d, ca),
      () => KEY_STEPS,
    ),
  );
  add(
    'genSignedCertWithKey',
    f(6, 6, (cn: unknown, ip: unknown, dns: unknown, d: unknown, ca: unknown, k: unknown) =>
      genSigned(cn, ip, dns, d, ca, parseKey(goString(k))),
    ),
  );
  add('buildCustomCert', f(2, 2, buildCustomCert));
}

/**
 * Sprig's key and certificate generators, checked as sprig's crypto_test checks them (facts,
 * our tests): genPrivateKey's PEM types, and certificates that parse, with the common name, the
 * CA flag, SANs and a positive serial, signed by the CA they name, for every key type sprig's
 * *WithKey forms take (rsa, ecdsa, ed25519). Node's X509Certificate reads them back.
 */
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { helmFunctions } from '../../../src/mirror/helm/template/helm-funcs.js';

function run(text: string, data: unknown = {}): string {
  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  set.parse('t', text);
  return set.execute('t', data);
}

/** A certificate's PEM and key, out of a template that prints both. */
function certOf(tpl: string, data: unknown = {}) {
  const [cert, key] = run(`${tpl}{{ $c.Cert }}|{{ $c.Key }}`, data).split('|');
  return { cert: new X509Certificate(cert!), pem: cert!, key: key! };
}

describe('genPrivateKey', () => {
  it.each([
    ['ecdsa', 'EC PRIVATE KEY'],
    ['ed25519', 'PRIVATE KEY'],
    // "" and "rsa" are one case in sprig (RSA 4096, about a second to make): "rsa" stands for both.
    ['rsa', 'RSA PRIVATE KEY'],
  ])('%j gives a %s that parses', (kind, type) => {
    const out = run(`{{ genPrivateKey "${kind}" }}`);
    expect(out.startsWith(`-----BEGIN ${type}-----\n`)).toBe(true);
    expect(() => createPrivateKey(out)).not.toThrow();
  });
  it('"dsa" gives a DSA PRIVATE KEY whose public key matches its private one', () => {
    const out = run('{{ genPrivateKey "dsa" }}');
    expect(out.startsWith('-----BEGIN DSA PRIVATE KEY-----\n')).toBe(true);
    const key = createPrivateKey(out);
    expect(key.asymmetricKeyType).toBe('dsa');
    // The file carries Y (= G^X mod P): a signature checks against the public key read from it.
    const signature = sign('sha256', Buffer.from('data'), key);
    expect(verify('sha256', Buffer.from('data'), createPublicKey(key), signature)).toBe(true);
  });
  it('an unknown type is a message, not an error', () => {
    expect(run('{{ genPrivateKey "bad" }}')).toBe('Unknown type bad');
  });
});

describe('genCA, genSelfSignedCert, genSignedCert', () => {
  it('genCA: a CA for the name, self-signed, with its RSA key', () => {
    const { cert, key } = certOf('{{ $c := genCA "foo-ca" 365 }}');
    expect(cert.subject).toBe('CN=foo-ca');
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(key.startsWith('-----BEGIN RSA PRIVATE KEY-----')).toBe(true);
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    expect(Math.round(days)).toBe(365);
  });

  it.each(['ecdsa', 'ed25519', 'rsa'])('genCAWithKey with a %s key keeps the key', (kind) => {
    // An RSA key from genCA (2048 bits) rather than genPrivateKey's slow 4096 bits.
    const key = run(kind === 'rsa' ? '{{ (genCA "k" 1).Key }}' : `{{ genPrivateKey "${kind}" }}`);
    const out = certOf('{{ $c := genCAWithKey "foo-ca" 365 .k }}', { k: key });
    expect(out.cert.ca).toBe(true);
    expect(out.cert.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(out.cert.verify(out.cert.publicKey)).toBe(true);
  });

  it.each(['', 'WithKey'])('genSelfSignedCert%s: the name, IPs, DNS names, not a CA', (form) => {
    const key = form ? run('{{ genPrivateKey "ecdsa" }}') : '';
    const args = '"foo.com" (list "10.0.0.1" "10.0.0.2") (list "bar.com" "bat.com") 365';
    const { cert } = certOf(`{{ $c := genSelfSignedCert${form} ${args}${form ? ' .k' : ''} }}`, { k: key });
    expect(cert.subject).toBe('CN=foo.com');
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBe('DNS:bar.com, DNS:bat.com, IP Address:10.0.0.1, IP Address:10.0.0.2');
    expect(BigInt(`0x${cert.serialNumber}`) > 0n).toBe(true);
  });

  it.each(['', 'WithKey'])('genSignedCert%s: signed by the CA it is given', (form) => {
    const key = form ? run('{{ genPrivateKey "ed25519" }}') : '';
    const tpl = `{{ $ca := genCA "foo-ca" 365 }}{{ $c := genSignedCert${form} "foo.com" (list "10.0.0.1" "::1") (list "bar.com") 365 $ca${form ? ' .k' : ''} }}{{ $ca.Cert }}|`;
    const [caPem, certPem] = run(`${tpl}{{ $c.Cert }}`, { k: key }).split('|');
    const ca = new X509Certificate(caPem!);
    const cert = new X509Certificate(certPem!);
    expect(cert.issuer).toBe('CN=foo-ca');
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe('DNS:bar.com, IP Address:10.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  });

  it('buildCustomCert takes base64 PEM back as a certificate; a bad one is an error', () => {
    const out = run(
      '{{ $ca := genCA "x" 1 }}{{ $c := buildCustomCert ($ca.Cert | b64enc) ($ca.Key | b64enc) }}{{ eq $c.Cert $ca.Cert }}',
    );
    expect(out).toBe('true');
    expect(() => run('{{ buildCustomCert ("fail" | b64enc) ("fail" | b64enc) }}')).toThrow(
      /unable to decode certificate/,
    );
  });

  it('an IP that is not one is an error, as in sprig', () => {
    expect(() => run('{{ genSelfSignedCert "x" (list "nope") nil 1 }}')).toThrow(/error parsing ip: nope/);
  });
});

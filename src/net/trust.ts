/**
 * The operating system's CA store, as curl, skopeo and podman read it: a CA installed the way a
 * bastion's runbook says (RHEL's /etc/pki/ca-trust/source/anchors + update-ca-trust, Debian's
 * /usr/local/share/ca-certificates + update-ca-certificates) lands in the distribution's bundle,
 * and airgap trusts it with no flag. Node itself trusts only the Mozilla roots it was built with.
 *
 * Where, in order: the file SSL_CERT_FILE names and the directories SSL_CERT_DIR names (OpenSSL's
 * variables; either set means exactly those), else the first bundle of the list Go's crypto/x509
 * reads on Linux. Then, beside them, the file NODE_EXTRA_CA_CERTS names (Node's own variable for
 * extra CAs, which users of Node tools set: Node stops honouring it once a CA list is given, so it
 * is read here). The PEMs are read once per process.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { usageError } from '../util/errors.js';
import { isNotFound } from '../util/fs.js';
import { NetError } from './errors.js';

/** The distribution bundles, in the order Go's crypto/x509 (root_linux.go) tries them. */
export const SYSTEM_CA_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Gentoo
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL 6
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/pki/tls/cacert.pem', // OpenELEC
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem', // CentOS, RHEL 7 and later
  '/etc/ssl/cert.pem', // Alpine
];

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function pemsIn(text: string): string[] {
  return text.match(PEM_BLOCK) ?? [];
}

function readEnvFile(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw usageError(
      NetError.TLS_FILE_UNREADABLE,
      `${variable} names ${path}, which cannot be read: ${(e as Error).message}`,
      {
        hint:
          variable === 'NODE_EXTRA_CA_CERTS'
            ? `point ${variable} at a PEM file of extra CAs, or unset it`
            : `point ${variable} at a PEM bundle, or unset it to use the system's CA store`,
      },
    );
  }
}

/** Certificates of the PEM files in a directory (OpenSSL's hashed links to the same file count once). */
function pemsInDir(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    if (isNotFound(e)) return []; // a directory that is not there holds none, as OpenSSL reads it
    throw usageError(
      NetError.TLS_FILE_UNREADABLE,
      `SSL_CERT_DIR names ${dir}, which cannot be read: ${(e as Error).message}`,
      {
        hint: "point SSL_CERT_DIR at a directory of PEM files, or unset it to use the system's CA store",
        cause: e,
      },
    );
  }
  const out: string[] = [];
  for (const n of names) {
    if (!/\.(pem|crt)$|\.\d+$/.test(n)) continue;
    try {
      if (!statSync(join(dir, n)).isFile()) continue;
      out.push(...pemsIn(readFileSync(join(dir, n), 'utf8')));
    } catch {
      // unreadable entry: skipped, as OpenSSL does
    }
  }
  return out;
}

/** Where the system store was found, for messages; undefined when none was. */
export interface SystemTrust {
  /** The store's CAs (none when the host has no bundle: Node's own roots are used instead). */
  pems: string[];
  /** NODE_EXTRA_CA_CERTS's CAs, trusted beside the store or Node's roots. */
  extra: string[];
  from: string[];
}

let cached: SystemTrust | undefined;

/** The OS CA store's certificates (each once), or no certificates when the host has no bundle. */
export function systemTrust(env: NodeJS.ProcessEnv = process.env): SystemTrust {
  if (env === process.env && cached) return cached;
  const pems: string[] = [];
  const extra: string[] = [];
  const from: string[] = [];
  if (env.SSL_CERT_FILE || env.SSL_CERT_DIR) {
    if (env.SSL_CERT_FILE) {
      pems.push(...pemsIn(readEnvFile('SSL_CERT_FILE', env.SSL_CERT_FILE)));
      from.push(env.SSL_CERT_FILE);
    }
    for (const dir of (env.SSL_CERT_DIR ?? '').split(':').filter(Boolean)) {
      pems.push(...pemsInDir(dir));
      from.push(dir);
    }
  } else {
    for (const bundle of SYSTEM_CA_BUNDLES) {
      let text: string;
      try {
        text = readFileSync(bundle, 'utf8');
      } catch (e) {
        if (isNotFound(e)) continue; // not this distribution's bundle
        // There but unreadable: trusting Node's own roots instead would hide the site's CAs.
        throw usageError(
          NetError.TLS_FILE_UNREADABLE,
          `the system CA bundle ${bundle} cannot be read: ${(e as Error).message}`,
          { hint: 'check its permissions, or set SSL_CERT_FILE to a readable PEM bundle', cause: e },
        );
      }
      pems.push(...pemsIn(text));
      from.push(bundle);
      break;
    }
  }
  if (env.NODE_EXTRA_CA_CERTS) {
    // Beside the store (never instead of it): with no store found, Node's own roots stay in use.
    extra.push(...pemsIn(readEnvFile('NODE_EXTRA_CA_CERTS', env.NODE_EXTRA_CA_CERTS)));
    from.push(env.NODE_EXTRA_CA_CERTS);
  }
  const trust = {
    pems: [...new Set(pems.map((p) => p.trim()))],
    extra: [...new Set(extra.map((p) => p.trim()))],
    from,
  };
  if (env === process.env) cached = trust;
  return trust;
}

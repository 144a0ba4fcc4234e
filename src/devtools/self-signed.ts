/** A self-signed certificate for localhost and 127.0.0.1 (and any extra names), made with the openssl CLI and cached in a folder. */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

export interface CertificatePair {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

/** Whether the cached certificate names every host in `names` (a cached one made for fewer names is made again). */
function covers(certPath: string, names: readonly string[]): boolean {
  try {
    const cert = new X509Certificate(readFileSync(certPath));
    return names.every((n) => (isIP(n) ? cert.checkIP(n) !== undefined : cert.checkHost(n) !== undefined));
  } catch {
    return false;
  }
}

const NAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

export function ensureSelfSignedCertificate(dir: string, extraNames: readonly string[] = []): CertificatePair {
  for (const n of extraNames) if (!NAME.test(n) && isIP(n) === 0) throw new Error(`not a host name or IP address: ${n}`);
  mkdirSync(dir, { recursive: true });
  const certPath = join(dir, 'localhost.crt');
  const keyPath = join(dir, 'localhost.key');
  if (!existsSync(certPath) || !existsSync(keyPath) || !covers(certPath, extraNames)) {
    const san = ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', ...extraNames.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`))];
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyPath, '-out', certPath, '-days', '825', '-subj', '/CN=localhost',
      '-addext', `subjectAltName=${[...new Set(san)].join(',')}`,
      '-addext', 'basicConstraints=critical,CA:TRUE',
    ], { stdio: 'ignore' });
  }
  return { certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

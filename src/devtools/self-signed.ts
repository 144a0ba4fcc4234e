/** A self-signed certificate for localhost and 127.0.0.1, made with the openssl CLI and cached in a folder. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertificatePair {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

export function ensureSelfSignedCertificate(dir: string): CertificatePair {
  mkdirSync(dir, { recursive: true });
  const certPath = join(dir, 'localhost.crt');
  const keyPath = join(dir, 'localhost.key');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyPath, '-out', certPath, '-days', '825', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      '-addext', 'basicConstraints=critical,CA:TRUE',
    ], { stdio: 'ignore' });
  }
  return { certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

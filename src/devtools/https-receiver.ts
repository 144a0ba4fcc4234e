/**
 * A development HTTPS destination: accepts batches on loopback with a
 * self-signed certificate, undoes gzip, answers verification challenges by
 * echoing `X-Svc-Verify`, and records every request. Tests script its
 * answers; `logdrain receiver` runs it for the README quick start.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { ensureSelfSignedCertificate } from './self-signed.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body after Content-Encoding is undone. */
  body: Buffer;
  rawBody: Buffer;
  receivedAt: number;
  /** The status this receiver answered with, once the answer is sent. */
  status?: number;
}

/** What to answer; undefined lets the default (verify echo, else 200) answer. */
export type Responder = (req: ReceivedRequest, res: ServerResponse) => boolean | void | Promise<boolean | void>;

export interface HttpsReceiver {
  url: string;
  port: number;
  caPath: string;
  ca: string;
  requests: ReceivedRequest[];
  /** Batches received (verify challenges excluded). */
  batches(): ReceivedRequest[];
  /** Batches received and answered 2xx. */
  accepted(): ReceivedRequest[];
  respondWith(responder: Responder | undefined): void;
  close(): Promise<void>;
}

export async function startHttpsReceiver(opts: {
  certDir: string;
  port?: number;
  /** The address to listen on (127.0.0.1 unless given). */
  host?: string;
  /** Extra names the certificate is valid for (a container's service name), beside localhost and 127.0.0.1; the first is the URL's host. */
  names?: readonly string[];
  onRequest?: (r: ReceivedRequest) => void;
}): Promise<HttpsReceiver> {
  const pair = ensureSelfSignedCertificate(opts.certDir, opts.names ?? []);
  const requests: ReceivedRequest[] = [];
  let responder: Responder | undefined;
  const server: Server = createServer({ cert: pair.cert, key: pair.key }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const rawBody = Buffer.concat(chunks);
        let body = rawBody;
        if (req.headers['content-encoding'] === 'gzip') {
          try {
            body = gunzipSync(rawBody);
          } catch {
            res.writeHead(400).end('bad gzip');
            return;
          }
        }
        const r: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, rawBody, receivedAt: Date.now() };
        requests.push(r);
        res.on('finish', () => (r.status = res.statusCode));
        opts.onRequest?.(r);
        if (responder && (await responder(r, res)) === true) return;
        if (res.headersSent) return;
        const token = req.headers['x-svc-verify'];
        if (typeof token === 'string') res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${opts.names?.[0] ?? 'localhost'}:${port}`,
    port,
    caPath: pair.certPath,
    ca: pair.cert,
    requests,
    batches: () => requests.filter((r) => r.headers['x-svc-verify'] === undefined),
    accepted: () => requests.filter((r) => r.headers['x-svc-verify'] === undefined && r.status !== undefined && r.status < 300),
    respondWith(next) {
      responder = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

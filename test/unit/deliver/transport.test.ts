/**
 * The delivery transport against a real HTTPS server on loopback (self-signed certificate):
 * the whole-attempt deadline, which undici's own headers and body timeouts do not give (they
 * bound the wait for headers and each gap between body chunks, not the attempt).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeadlines, createTransport, type Transport } from '../../../src/deliver/transport.js';
import { classifyTransportError } from '../../../src/deliver/outcome.js';
import { ensureSelfSignedCertificate } from '../../../src/devtools/self-signed.js';
import { CERT_DIR } from '../../helpers/receiver.js';

const TIMEOUT_MS = 600;

describe('delivery transport', () => {
  let server: Server;
  let base: string;
  let transport: Transport;
  const trickling = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    const { cert, key } = ensureSelfSignedCertificate(CERT_DIR);
    server = createServer({ cert, key }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/trickle') {
          // Headers at once, then a byte every 50 ms, forever: every gap is far inside the timeout.
          res.writeHead(200, { 'content-type': 'text/plain' });
          const t = setInterval(() => res.write('.'), 50);
          trickling.add(t);
          res.on('close', () => {
            clearInterval(t);
            trickling.delete(t);
          });
          return;
        }
        res.writeHead(202, { 'content-type': 'text/plain' });
        res.end('accepted');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    transport = createTransport({ allowHosts: ['127.0.0.1'], extraCaCerts: ensureSelfSignedCertificate(CERT_DIR).cert, timeoutMs: TIMEOUT_MS });
  });

  afterAll(async () => {
    for (const t of trickling) clearInterval(t);
    await transport.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (path: string) => transport.post({ url: `${base}${path}`, headers: { 'content-type': 'text/plain' }, body: Buffer.from('x') });

  it('answers with the status, headers and body of a prompt destination', async () => {
    const r = await post('/ok');
    expect(r).toMatchObject({ kind: 'response', statusCode: 202 });
    expect(r.kind === 'response' && r.body.toString()).toBe('accepted');
  });

  it('ends an attempt whose answer trickles on past the timeout, as a timeout', async () => {
    const results = await Promise.all([post('/trickle'), post('/trickle'), post('/ok')]);
    for (const r of results.slice(0, 2)) {
      expect(r.kind).toBe('error');
      expect(r.kind === 'error' && classifyTransportError(r.error)).toBe('timeout');
      expect(r.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      // The deadline is shared by attempts started within 100 ms of each other: never much later.
      expect(r.latencyMs).toBeLessThan(TIMEOUT_MS + 1_000);
    }
    // An attempt that finished in time, under the same deadline signal, is untouched.
    expect(results[2]).toMatchObject({ kind: 'response', statusCode: 202 });
    // The transport goes on working after its deadline fired.
    expect(await post('/ok')).toMatchObject({ kind: 'response', statusCode: 202 });
  });

  it('refuses a private destination before connecting', async () => {
    const guarded = createTransport({ allowHosts: [], timeoutMs: TIMEOUT_MS });
    const r = await guarded.post({ url: `${base}/ok`, headers: {}, body: Buffer.from('x') });
    expect(r.kind === 'error' && classifyTransportError(r.error)).toBe('ssrf');
    await guarded.close();
  });
});

describe('shared attempt deadlines', () => {
  it('hands attempts started within one slot the same signal, and a later one a new signal', async () => {
    const deadline = createDeadlines(60_000, 40);
    const a = deadline();
    expect(deadline()).toBe(a);
    await new Promise((r) => setTimeout(r, 60));
    const b = deadline();
    expect(b).not.toBe(a);
    expect(a.aborted || b.aborted).toBe(false);
  });

  it('aborts a slot with a TimeoutError once its time is up', async () => {
    const signal = createDeadlines(30, 10)();
    await new Promise((r) => setTimeout(r, 120));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
  });
});

/**
 * Stopping with a request in flight (spec 01 part 7.1.5, CONTRACT part 7): `start` and `serve`
 * spawned as real processes; two uploads to the ingest route are under way (their headers taken,
 * half their bodies sent; one small, one large enough for the reader thread) when the process is
 * sent SIGTERM. A request that arrives meanwhile, on a new
 * connection, is answered `503 {error: {code: CORE_DRAINING, message, retryable: true}}` with
 * `Retry-After: 1`; the uploads then complete and are accepted, and the process exits 0, after
 * which the port refuses connections.
 *
 * Both modes (vitest.config.ts): PGlite in memory, or Postgres and the librdkafka mock broker.
 */
import { describe, expect, it } from 'vitest';
import http from 'node:http';
import { TEST_MODE, waitFor } from '../../helpers/app.js';
import { processModes } from '../../helpers/process-modes.js';
import { freePort } from '../../helpers/poller.js';
import { records } from '../../helpers/records.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request on a connection of its own; its answer whole, or the error's code. */
function ask(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/**
 * An upload whose headers the server has taken (it answered `100 Continue`, which Node sends as it
 * hands the request over) and whose body is sent in two halves, the second when told.
 */
async function startUpload(port: number, body: Buffer): Promise<{ finish(): Promise<Answer> }> {
  const req = http.request({
    host: '127.0.0.1', port, path: '/internal/records', method: 'POST', agent: false,
    headers: { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/x-ndjson', 'content-length': String(body.length), expect: '100-continue' },
  });
  const answered = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
  });
  const halfSent = new Promise<void>((resolve) => req.on('continue', () => req.write(body.subarray(0, body.length >> 1), () => resolve())));
  await Promise.race([halfSent, answered.then((a) => Promise.reject(new Error(`answered before its body was sent: ${a.status} ${a.body}`)))]);
  return {
    finish() {
      req.end(body.subarray(body.length >> 1));
      return answered;
    },
  };
}

describe(`stopping with a request in flight (${TEST_MODE})`, () => {
  const modes = processModes('draining');

  for (const role of ['start', 'serve'] as const) {
    it(`${role}: a request arriving after SIGTERM is answered 503 CORE_DRAINING while the uploads in flight (one read on the reader thread) complete, and the process exits 0`, async () => {
      const port = await freePort();
      const p = modes.spawn(role, port);
      await waitFor(async () => {
        const a = await ask(port, '/healthz');
        return typeof a !== 'string' && a.status === 200;
      }, { timeoutMs: 45_000, intervalMs: 50, what: `${role} answering` });

      const batch = records(20);
      const upload = await startUpload(port, Buffer.from(batch.map((r) => JSON.stringify(r)).join('\n')));
      // A body over 64 KiB, read on the ingest reader thread: the thread outlives the stop until it is read.
      const large = records(20, { message: 'x'.repeat(8 * 1024) });
      const largeUpload = await startUpload(port, Buffer.from(large.map((r) => JSON.stringify(r)).join('\n')));
      p.kill('SIGTERM');
      // Logged as the stop begins, in the same turn that hands new requests to the draining answer.
      await p.waitForEvent('process.stopping');

      const drained = await ask(port, '/admin/orgs/org_acme/log-drains', { authorization: 'Bearer lk_acme_manage' });
      expect(typeof drained === 'string' ? drained : { status: drained.status, body: JSON.parse(drained.body) }).toEqual({
        status: 503, body: { error: { code: 'CORE_DRAINING', message: expect.any(String), retryable: true } },
      });
      expect((drained as Answer).headers['retry-after']).toBe('1');
      expect((drained as Answer).headers.connection).toBe('close');

      const [done, largeDone] = await Promise.all([upload.finish(), largeUpload.finish()]);
      expect({ status: done.status, body: JSON.parse(done.body) }).toEqual({ status: 202, body: { accepted: 20, rejected: [] } });
      expect(done.headers.connection).toBe('close');
      expect({ status: largeDone.status, body: JSON.parse(largeDone.body) }).toEqual({ status: 202, body: { accepted: 20, rejected: [] } });

      const { code, signal } = await p.exited;
      expect({ code, signal }, p.stderr.join('\n')).toEqual({ code: 0, signal: null });
      expect(p.stderr).toEqual([]);
      expect(await ask(port, '/healthz')).toBe('ECONNREFUSED');
    });
  }
});

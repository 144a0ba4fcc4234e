/**
 * `logdrain receiver` as a developer runs it (dist/cli.js, a real child process): it listens on the
 * port asked for (0: any free one) and prints its URL, and with `--secret` it checks every batch's
 * Standard Webhooks signature, printing `signature ok` or `signature INVALID (<reason>)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { X509Certificate } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { generateSecret, signBatch, signingKey } from '../../../src/sign/standard-webhooks.js';
import { waitFor } from '../../helpers/app.js';

/** Plain-text lines the process printed (the helper keeps non-JSON stdout lines with stderr). */
const textOf = (p: LogdrainProcess) => p.stderr;

async function postBatch(url: string, ca: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const gz = gzipSync(body);
  return new Promise((resolve, reject) => {
    const req = request(`${url}/hook`, {
      method: 'POST', ca,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(gz.length), ...headers },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(gz);
  });
}

describe('logdrain receiver', () => {
  const secret = generateSecret();
  const dir = mkdtempSync(join(tmpdir(), 'logdrain-receiver-'));
  let p: LogdrainProcess;
  let url: string;
  let ca: string;
  let seen = 0;
  /** The lines printed for the next batch: from its `batch` line to its signature verdict. */
  const nextVerdict = async (batchId: string) => {
    const end = await waitFor(() => {
      const all = textOf(p);
      const start = all.findIndex((l, i) => i >= seen && l.startsWith(`batch ${batchId} `));
      if (start < 0) return undefined;
      const at = all.findIndex((l, i) => i > start && l.startsWith('signature '));
      return at < 0 ? undefined : at + 1;
    }, { what: `the verdict on ${batchId}` });
    seen = end;
    return textOf(p)[end - 1]!;
  };

  beforeAll(async () => {
    p = spawnLogdrain(['receiver', '--port', '0', '--dir', dir, '--name', 'receiver', '--secret', secret], { DATA_DIR: 'memory://' });
    const line = await waitFor(() => textOf(p).find((l) => l.startsWith('receiver listening on ')), { what: 'the receiver URL' });
    const printed = /^receiver listening on (https:\/\/receiver:(\d+))$/.exec(line);
    expect(printed, line).not.toBeNull();
    expect(Number(printed![2])).toBeGreaterThan(0);
    // Reached on loopback; the certificate also names the extra host asked for.
    url = `https://localhost:${printed![2]}`;
    const caLine = textOf(p).find((l) => l.startsWith('trust its certificate with NODE_EXTRA_CA_CERTS='))!;
    ca = readFileSync(caLine.split('=')[1]!, 'utf8');
    expect(new X509Certificate(ca).checkHost('receiver')).toBe('receiver');
  });
  afterAll(async () => {
    p?.kill('SIGTERM');
    await p?.exited;
  });

  it('prints "signature ok" for a batch the engine signed, and for one the standardwebhooks package signed', async () => {
    const body = Buffer.from(JSON.stringify({ batchId: 'B1', records: [{ id: 'r1' }] }));
    expect(await postBatch(url, ca, body, { 'x-svc-batch-id': 'B1', ...signBatch([signingKey(secret)], 'B1', body) })).toBe(200);
    expect(await nextVerdict('B1')).toBe('signature ok');

    const ts = new Date();
    const headers = { 'webhook-id': 'B2', 'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('B2', ts, body.toString()) };
    await postBatch(url, ca, body, { 'x-svc-batch-id': 'B2', ...headers });
    expect(await nextVerdict('B2')).toBe('signature ok');
  });

  it('accepts a rotation window\'s two signatures when either is the secret\'s', async () => {
    const body = Buffer.from('{"records":[]}');
    await postBatch(url, ca, body, { 'x-svc-batch-id': 'B3', ...signBatch([signingKey(generateSecret()), signingKey(secret)], 'B3', body) });
    expect(await nextVerdict('B3')).toBe('signature ok');
  });

  it('prints "signature INVALID (<reason>)" for another secret, an altered body, a stale timestamp and no signature', async () => {
    const body = Buffer.from('{"records":[{"id":"r1"}]}');
    await postBatch(url, ca, body, { 'x-svc-batch-id': 'B4', ...signBatch([signingKey(generateSecret())], 'B4', body) });
    expect(await nextVerdict('B4')).toMatch(/^signature INVALID \(no signature matches/);

    const signed = signBatch([signingKey(secret)], 'B5', body);
    await postBatch(url, ca, Buffer.from('{"records":[{"id":"r2"}]}'), { 'x-svc-batch-id': 'B5', ...signed });
    expect(await nextVerdict('B5')).toMatch(/^signature INVALID \(no signature matches/);

    await postBatch(url, ca, body, { 'x-svc-batch-id': 'B6', ...signBatch([signingKey(secret)], 'B6', body, Date.now() - 10 * 60_000) });
    expect(await nextVerdict('B6')).toMatch(/^signature INVALID \(timestamp too old/);

    await postBatch(url, ca, body, { 'x-svc-batch-id': 'B7' });
    expect(await nextVerdict('B7')).toBe('signature INVALID (missing header webhook-id, webhook-timestamp, webhook-signature)');
  });

  it('refuses a --secret that is not a key, before listening', async () => {
    const bad = spawnLogdrain(['receiver', '--port', '0', '--dir', dir, '--secret', 'whsec_!!!!'], { DATA_DIR: 'memory://' });
    const { code } = await bad.exited;
    expect(code).toBe(1);
    expect(bad.stderr.join('\n')).toContain('--secret: a whsec_ secret must be whsec_ followed by padded base64');
  });
});

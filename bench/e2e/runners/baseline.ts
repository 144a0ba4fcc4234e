/**
 * The baseline of the end-to-end benchmark: the unavoidable work of a drain and nothing else.
 * kafkajs consume, JSON.parse, NDJSON (JSON.stringify a line), gzip level 1, an HMAC-SHA256
 * signature over the uncompressed body, an undici POST; no selection, scrubbing, accounting or
 * offsets beyond kafkajs's own auto-commit. Records are grouped by organization (one endpoint
 * each, as one drain per organization would be) into batches of 1000, or whatever is there after
 * 100 ms without a new record, so each POST carries about 100 KB of gzip as the engine's do.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCb, constants as zlib } from 'node:zlib';
import { Agent, request } from 'undici';
import { Gate, requiredEnv, startRunner } from './runner-kit.js';

const gzip = promisify(gzipCb);
const BATCH_RECORDS = 1000;
const LINGER_MS = 100;
/** POSTs in flight at once; more records wait in Kafka (the partition is held). */
const MAX_IN_FLIGHT = 8;

const target = requiredEnv('TARGET_URL');
const key = randomBytes(32);
// The default TLS context trusts NODE_EXTRA_CA_CERTS (the receiver's CA).
const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
const buffers = new Map<string, string[]>();
const gate = new Gate();
let inFlight = 0;
let sequence = 0;
let linger: NodeJS.Timeout | undefined;

async function post(org: string, lines: string[]): Promise<void> {
  const body = Buffer.from(lines.join('\n') + '\n', 'utf8');
  const compressed = await gzip(body, { level: zlib.Z_BEST_SPEED });
  const id = `msg_${process.pid}_${++sequence}`;
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest('base64');
  for (let attempt = 1; ; attempt++) {
    clock.posted();
    const res = await request(`${target}/${org}/0`, {
      method: 'POST', dispatcher: agent, body: compressed,
      headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip', 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${signature}` },
    });
    await res.body.dump();
    if (res.statusCode >= 200 && res.statusCode < 300) break;
    if (attempt >= 5) throw new Error(`POST answered ${res.statusCode} ${attempt} times`);
  }
  clock.delivered(lines.length);
}

function send(org: string, lines: string[]): void {
  inFlight++;
  void post(org, lines).then(
    () => {
      inFlight--;
      gate.wake();
    },
    (e: unknown) => {
      process.stderr.write(`[baseline] ${String(e)}\n`);
      process.exit(2);
    },
  );
}

function flushAll(): void {
  linger = undefined;
  for (const [org, lines] of buffers) if (lines.length > 0) send(org, lines);
  buffers.clear();
}

const clock = startRunner({
  runner: 'baseline',
  async eachBatch({ batch, heartbeat }) {
    for (const m of batch.messages) {
      if (!m.value) continue;
      const r = JSON.parse(m.value.toString('utf8')) as { orgId: string };
      let lines = buffers.get(r.orgId);
      if (!lines) buffers.set(r.orgId, (lines = []));
      lines.push(JSON.stringify(r));
      if (lines.length >= BATCH_RECORDS) {
        buffers.delete(r.orgId);
        await gate.until(() => inFlight < MAX_IN_FLIGHT);
        send(r.orgId, lines);
      }
    }
    if (linger) clearTimeout(linger);
    linger = setTimeout(flushAll, LINGER_MS);
    await heartbeat();
  },
  close: () => agent.close(),
});

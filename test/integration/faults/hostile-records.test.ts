/**
 * Malformed and oversized Kafka records (hostile input), through the
 * real librdkafka mock broker and an in-process `logdrain worker` on Postgres:
 * every kind of bad message, interleaved with valid records on the same
 * partitions. Every valid record is delivered; every bad one is counted (the
 * dead-letter metric by reason class, one dead_letters row each); the consumer
 * keeps consuming after them, and the group's offsets are committed past them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { startKafkaFixture, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { record } from '../../helpers/records.js';
import { expectNothingLost, ledgerOf, receivedRecordIds } from '../../helpers/ledger.js';

type Message = { key: string | null; value: Buffer | string | null };
type DeadClass = 'not_json' | 'too_large' | 'empty' | 'invalid';

const valid = (p: Record<string, unknown> = {}): Record<string, unknown> => ({ ...record(), ...p });
const json = (v: unknown): string => JSON.stringify(v);
const without = (k: string): Record<string, unknown> => {
  const r = valid();
  delete r[k];
  return r;
};
/** `depth` nested objects: `{"a":{"a":...{}}}`; JSON.parse must not blow the stack on it. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);

/** Each bad message with the dead-letter class the worker must count it under. */
function hostileMessages(): { name: string; msg: Message; cls: DeadClass }[] {
  const garbage = randomBytes(512);
  garbage[0] = 0xff; // never valid UTF-8 JSON, and NUL bytes in the middle
  garbage[100] = 0x00;
  return [
    { name: 'not JSON', msg: { key: 'org_acme', value: '{"this is": not json' }, cls: 'not_json' },
    { name: 'truncated JSON', msg: { key: 'org_acme', value: json(valid()).slice(0, 40) }, cls: 'not_json' },
    { name: 'JSON array', msg: { key: 'org_acme', value: json([valid(), valid()]) }, cls: 'invalid' },
    { name: 'JSON number', msg: { key: 'org_acme', value: '42' }, cls: 'invalid' },
    { name: 'JSON null', msg: { key: 'org_acme', value: 'null' }, cls: 'invalid' },
    { name: 'JSON string', msg: { key: 'org_acme', value: '"a string"' }, cls: 'invalid' },
    { name: 'missing id', msg: { key: 'org_acme', value: json(without('id')) }, cls: 'invalid' },
    { name: 'missing orgId', msg: { key: 'org_acme', value: json(without('orgId')) }, cls: 'invalid' },
    { name: 'missing timestamp', msg: { key: 'org_acme', value: json(without('timestamp')) }, cls: 'invalid' },
    { name: 'numeric id', msg: { key: 'org_acme', value: json(valid({ id: 12345 })) }, cls: 'invalid' },
    { name: 'empty agentName', msg: { key: 'org_acme', value: json(valid({ agentName: '' })) }, cls: 'invalid' },
    { name: 'numeric message', msg: { key: 'org_acme', value: json(valid({ message: 7 })) }, cls: 'invalid' },
    { name: 'attributes as a string', msg: { key: 'org_acme', value: json(valid({ attributes: 'k=v' })) }, cls: 'invalid' },
    { name: 'attributes as an array', msg: { key: 'org_acme', value: json(valid({ attributes: ['k'] })) }, cls: 'invalid' },
    { name: 'nested attribute value', msg: { key: 'org_acme', value: json(valid({ attributes: { a: { b: 1 } } })) }, cls: 'invalid' },
    { name: 'null attribute value', msg: { key: 'org_acme', value: json(valid({ attributes: { a: null } })) }, cls: 'invalid' },
    { name: 'severity fatal', msg: { key: 'org_acme', value: json(valid({ severity: 'fatal' })) }, cls: 'invalid' },
    { name: 'environment staging', msg: { key: 'org_acme', value: json(valid({ environment: 'staging' })) }, cls: 'invalid' },
    { name: 'source with capitals', msg: { key: 'org_acme', value: json(valid({ source: 'MCP' })) }, cls: 'invalid' },
    { name: 'event with digits', msg: { key: 'org_acme', value: json(valid({ event: 'call2' })) }, cls: 'invalid' },
    { name: 'timestamp not RFC 3339', msg: { key: 'org_acme', value: json(valid({ timestamp: 'yesterday' })) }, cls: 'invalid' },
    { name: 'timestamp without a zone', msg: { key: 'org_acme', value: json(valid({ timestamp: '2026-11-20T10:00:00' })) }, cls: 'invalid' },
    { name: 'traceId too short', msg: { key: 'org_acme', value: json(valid({ traceId: 'abc' })) }, cls: 'invalid' },
    { name: 'traceId upper case', msg: { key: 'org_acme', value: json(valid({ traceId: 'A'.repeat(32) })) }, cls: 'invalid' },
    { name: 'spanId not hex', msg: { key: 'org_acme', value: json(valid({ spanId: 'z'.repeat(16) })) }, cls: 'invalid' },
    { name: 'NUL in message', msg: { key: 'org_acme', value: json(valid({ message: 'before\u0000after' })) }, cls: 'invalid' },
    { name: 'NUL in an attribute key', msg: { key: 'org_acme', value: json(valid({ attributes: { 'k\u0000': 'v' } })) }, cls: 'invalid' },
    { name: 'deeply nested attributes', msg: { key: 'org_acme', value: json(valid({ attributes: {} })).replace('"attributes":{}', `"attributes":${nested(20_000)}`) }, cls: 'invalid' },
    // Fields a record does not define are kept, but one nested this deep would fail Postgres's JSON parser on every write.
    { name: 'unknown field nested 20,000 deep', msg: { key: 'org_acme', value: json(valid()).slice(0, -1) + `,"extra":${'['.repeat(20_000)}${']'.repeat(20_000)}}` }, cls: 'invalid' },
    { name: 'lone surrogate in message', msg: { key: 'org_acme', value: json(valid({ message: 'x\ud800y' })) }, cls: 'invalid' },
    { name: 'lone surrogate in an attribute key', msg: { key: 'org_acme', value: json(valid({ attributes: { 'k\udfff': 1 } })) }, cls: 'invalid' },
    { name: '2 MB message', msg: { key: 'org_acme', value: json(valid({ message: 'x'.repeat(2 * 1024 * 1024) })) }, cls: 'too_large' },
    { name: 'empty message', msg: { key: 'org_acme', value: '' }, cls: 'not_json' },
    { name: 'null value (tombstone)', msg: { key: 'org_acme', value: null }, cls: 'empty' },
    { name: 'binary garbage', msg: { key: 'org_acme', value: garbage }, cls: 'not_json' },
    { name: 'raw NUL byte inside a JSON string', msg: { key: 'org_acme', value: Buffer.from(json(valid({ message: 'AB' })).replace('AB', 'A\u0000B')) }, cls: 'not_json' },
  ];
}

async function deadLetterMetric(worker: TestApp): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^logdrain_records_dead_lettered_total\{reason="([a-z_]+)"[^}]*\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('malformed and oversized Kafka records', () => {
  let fx: KafkaFixture;
  let worker: TestApp;
  let drainId: string;

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 2 });
    drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'hostile', type: 'http', endpoint: `${fx.receiver.url}/hostile`, format: 'ndjson', minSeverity: 'debug' });
    worker = await startApp(fx.workerEnv, 'worker');
    await waitFor(async () => (await fetch(`http://127.0.0.1:${worker.port}/readyz`)).status === 200, { what: 'the worker joined', timeoutMs: 20_000 });
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await fx?.close();
  });

  it('delivers every valid record around them, counts each bad one by reason, and commits past them', async () => {
    const hostile = hostileMessages();
    const producer = await fx.producer();
    const validIds: string[] = [];
    const messages: Message[] = [];
    // A valid record before and after every bad one, alternating partitions by key.
    for (const [i, h] of hostile.entries()) {
      const before = valid();
      validIds.push(before.id as string);
      messages.push({ key: i % 2 ? 'org_acme' : 'org_acme-b', value: json(before) }, { ...h.msg, key: i % 2 ? h.msg.key : 'org_acme-b' });
    }
    // Duplicate ids: both copies are valid records; delivery is at least once, consumers dedupe on id.
    const dup = valid();
    validIds.push(dup.id as string);
    messages.push({ key: 'org_acme', value: json(dup) }, { key: 'org_acme-b', value: json(dup) });
    // A surrogate pair written as escapes is a whole character: still a valid record.
    const escapedPair = valid({ message: 'smile EMOJI' });
    validIds.push(escapedPair.id as string);
    messages.push({ key: 'org_acme', value: json(escapedPair).replace('EMOJI', '\\ud83d\\ude00') });
    // Invalid UTF-8 inside a string is decoded with replacement characters: still a valid record.
    const mojibake = valid();
    validIds.push(mojibake.id as string);
    messages.push({ key: 'org_acme', value: Buffer.concat([Buffer.from(json(mojibake).slice(0, -1)), Buffer.from(',"agentVersion":"v\xff"}', 'latin1')]) });
    for (const m of messages) await producer.send({ topic: fx.topic, messages: [m] });

    const received = await waitFor(() => {
      const ids = fx.receivedIds('/hostile');
      return validIds.every((id) => ids.has(id)) ? ids : undefined;
    }, { what: 'every valid record delivered', timeoutMs: 30_000 });
    expect(received.get(dup.id as string)).toBeGreaterThanOrEqual(1);
    const report = await ledgerOf({ drainId, produced: validIds, received: receivedRecordIds(fx.receiver.accepted(), '/hostile'), sql: fx.api.store.sql, label: 'hostile records' });
    expectNothingLost(report);
    expect(report.droppedByReason).toEqual({});

    // Counted: one dead_letters row per bad message, with a reason; the metric by class.
    const expected: Record<string, number> = {};
    for (const h of hostile) expected[h.cls] = (expected[h.cls] ?? 0) + 1;
    await waitFor(async () => (await fx.api.store.deadLetters.count()) >= hostile.length, { what: 'every dead letter stored', timeoutMs: 15_000 });
    expect(await fx.api.store.deadLetters.count()).toBe(hostile.length);
    const rows = await fx.api.store.deadLetters.recent(100);
    for (const r of rows) {
      expect(r.reason.length).toBeGreaterThan(0);
      expect(r.payload.length).toBeLessThanOrEqual(4096);
    }
    expect(rows.map((r) => r.reason)).toEqual(expect.arrayContaining([
      'not valid JSON', 'not a JSON object', 'id must be a non-empty string', 'severity must be debug, info, warn or error',
      'traceId must be 32 lowercase hex characters', 'empty message', 'extra nests deeper than 32 levels', 'contains half of a UTF-16 surrogate pair',
    ]));
    expect(rows.some((r) => r.reason.startsWith('record of') && r.reason.includes('exceeds'))).toBe(true);
    // Raw NUL bytes (which Postgres text cannot hold) are stored visibly replaced, not lost with the row.
    expect(rows.filter((r) => r.reason === 'not valid JSON' && r.payload.includes('\uFFFD')).length).toBeGreaterThanOrEqual(2);
    expect(await deadLetterMetric(worker)).toEqual(expected);

    // The consumer did not stop: records produced afterwards arrive too.
    const after = [valid(), valid()];
    await producer.send({ topic: fx.topic, messages: after.map((r) => ({ key: 'org_acme', value: json(r) })) });
    await waitFor(() => after.every((r) => fx.receivedIds('/hostile').has(r.id as string)), { what: 'records after the hostile ones', timeoutMs: 15_000 });

    // Offsets committed past every message, bad ones included.
    const admin = new Kafka({ clientId: 'test-admin', brokers: fx.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(fx.topic);
      await waitFor(async () => {
        const [committed] = await admin.fetchOffsets({ groupId: fx.workerEnv.KAFKA_GROUP_ID!, topics: [fx.topic] });
        return ends.every((e) => e.high === '0' || committed!.partitions.find((p) => p.partition === e.partition)?.offset === e.high);
      }, { what: 'offsets committed to the end of each partition', timeoutMs: 20_000 });
    } finally {
      await admin.disconnect();
    }
  }, 90_000);
});

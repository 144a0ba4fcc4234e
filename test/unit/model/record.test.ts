import { describe, expect, it } from 'vitest';
import { decodeRecord, MAX_RECORD_BYTES, textRefusal } from '../../../src/model/record.js';
import { validateSourceRecord } from '../../helpers/receiver.js';

const valid = {
  id: 'r1', orgId: 'org_acme', agentId: 'agt_support', agentName: 'support-bot', environment: 'production',
  source: 'mcp', event: 'error', severity: 'error', timestamp: '2026-11-22T10:00:00.123Z', executionId: 'exe_1',
  message: 'tool failed', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), attributes: { tool: 'search', ms: 12, ok: false },
};

/** Each case: a mutation of the valid record, and whether it must pass. */
const CASES: [string, Record<string, unknown>, boolean][] = [
  ['the valid record', {}, true],
  ['no optional fields', { message: undefined, traceId: undefined, spanId: undefined, attributes: undefined }, true],
  ['agentVersion', { agentVersion: '4' }, true],
  ['offset timestamp', { timestamp: '2026-11-22T10:00:00+02:00' }, true],
  ['source with _ and -', { source: 'agent_error-x' }, true],
  ['empty id', { id: '' }, false],
  ['numeric orgId', { orgId: 5 }, false],
  ['missing agentName', { agentName: undefined }, false],
  ['unknown environment', { environment: 'staging' }, false],
  ['uppercase source', { source: 'MCP' }, false],
  ['event with a digit', { event: 'err0r' }, false],
  ['unknown severity', { severity: 'fatal' }, false],
  ['timestamp without zone', { timestamp: '2026-11-22T10:00:00' }, false],
  ['timestamp not a date', { timestamp: 'yesterday' }, false],
  ['short traceId', { traceId: 'abc' }, false],
  ['uppercase spanId', { spanId: 'B'.repeat(16) }, false],
  ['nested attribute', { attributes: { a: { b: 1 } } }, false],
  ['null attribute', { attributes: { a: null } }, false],
  ['array attributes', { attributes: [1] }, false],
  ['numeric message', { message: 5 }, false],
];

describe('decodeRecord (CONTRACT part 3)', () => {
  it.each(CASES)('%s', (_name, patch, pass) => {
    const r = JSON.parse(JSON.stringify({ ...valid, ...patch }));
    const decoded = decodeRecord(JSON.stringify(r));
    expect(decoded.ok).toBe(pass);
    // The JSON Schema in schemas/ states the same rules.
    expect(validateSourceRecord(r)).toBe(pass);
  });

  it('refuses what is not JSON, not an object, or too large, with a reason', () => {
    expect(decodeRecord('{"id":')).toEqual({ ok: false, reason: 'not valid JSON' });
    expect(decodeRecord('[1,2]')).toEqual({ ok: false, reason: 'not a JSON object' });
    const big = decodeRecord(JSON.stringify({ ...valid, message: 'x'.repeat(MAX_RECORD_BYTES) }));
    expect(big.ok).toBe(false);
    expect(!big.ok && big.reason).toMatch(/exceeds/);
  });

  it('refuses a NUL character (Postgres text cannot store it), and keeps the JSON of a good record as it came', () => {
    const nul = decodeRecord(JSON.stringify({ ...valid, message: 'a\u0000b' }));
    expect(nul).toEqual({ ok: false, reason: 'contains a NUL character (\\u0000)' });
    const text = JSON.stringify({ ...valid, message: 'héllo ✓' });
    const bytes = Buffer.from(text);
    const good = decodeRecord(bytes);
    expect(good.ok && good.json).toBe(bytes); // the message's own bytes, not a copy
    expect(decodeRecord(text)).toMatchObject({ ok: true, json: text });
    // Bytes that are not UTF-8 (Postgres would refuse them): the decoded text, with U+FFFD.
    const at = text.indexOf('✓');
    const bad = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff]), Buffer.from(text.slice(at + 1))]);
    const decoded = decodeRecord(bad);
    expect(decoded.ok && typeof decoded.json).toBe('string');
    expect(decoded.ok && (decoded.json as string).includes('\uFFFD')).toBe(true);
    // A record that holds U+FFFD itself, in valid UTF-8: still its own bytes.
    const withReplacement = Buffer.from(JSON.stringify({ ...valid, message: 'lost: \uFFFD' }));
    const kept = decodeRecord(withReplacement);
    expect(kept.ok && kept.json).toBe(withReplacement);
  });

  it("gives the record's time in milliseconds, parsed once with the validation", () => {
    const utc = decodeRecord(JSON.stringify(valid));
    expect(utc.ok && utc.timeMs).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
    const offset = decodeRecord(JSON.stringify({ ...valid, timestamp: '2026-11-22T01:00:00+02:00' }));
    expect(offset.ok && offset.timeMs).toBe(Date.UTC(2026, 10, 21, 23, 0, 0)); // the previous UTC day
  });
});

describe('textRefusal (a parsed record checked by its text, not parsed again)', () => {
  const TEXT_CASES: [string, Record<string, unknown>][] = [
    ['a good record', {}],
    ['too large', { message: 'x'.repeat(MAX_RECORD_BYTES) }],
    ['holding NUL', { message: 'a\u0000b' }],
    ['half a surrogate pair', { message: 'a\ud800b' }],
    ['half a surrogate pair in an attribute key', { attributes: { ['k\udc00']: 1 } }],
    ['a whole surrogate pair', { message: 'a\ud83d\ude00b' }],
    ['an escaped backslash before u0000, not NUL', { message: '\\u0000' }],
  ];
  it.each(TEXT_CASES)('%s: refused as decodeRecord refuses its text', (_name, patch) => {
    const value = JSON.parse(JSON.stringify({ ...valid, ...patch }));
    const text = JSON.stringify(value);
    const decoded = decodeRecord(text);
    expect(textRefusal(text, value)).toBe(decoded.ok ? undefined : decoded.reason);
  });

  it('refuses each of size, NUL and half a pair with its own reason', () => {
    const refusal = (patch: Record<string, unknown>) => {
      const value = { ...valid, ...patch };
      return textRefusal(JSON.stringify(value), value);
    };
    expect(refusal({ message: 'x'.repeat(MAX_RECORD_BYTES) })).toMatch(/exceeds/);
    expect(refusal({ message: 'a\u0000b' })).toBe('contains a NUL character (\\u0000)');
    expect(refusal({ message: 'a\ud800b' })).toBe('contains half of a UTF-16 surrogate pair');
    expect(refusal({})).toBeUndefined();
  });
});

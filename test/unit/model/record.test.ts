import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { decodeRecord, isCalendarDay, MAX_RECORD_BYTES, parseRfc3339, textRefusal, validateRecord } from '../../../src/model/record.js';
import { BOUNDED_STRING_FIELDS, RECORD_LIMITS } from '../../../src/model/record-limits.js';
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

describe('validateRecord, field by field', () => {
  const schema = JSON.parse(readFileSync(new URL('../../../schemas/agent-record.schema.json', import.meta.url), 'utf8')) as { properties: Record<string, { pattern?: string }> };

  it("checks source, event, traceId and spanId by hand as the schema's patterns do", () => {
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    // Characters on both sides of each range the patterns name, and a few beyond ASCII.
    const alphabet = ['a', 'b', 'f', 'g', 'z', '0', '9', '_', '-', '`', '{', '/', ':', '@', 'A', 'F', 'G', 'Z', ' ', 'é', 'ａ', '٣'];
    for (const field of ['source', 'event', 'traceId', 'spanId'] as const) {
      const pattern = new RegExp(schema.properties[field]!.pattern!);
      const texts = ['', 'a', 'a'.repeat(16), 'a'.repeat(32), '0'.repeat(16), '0'.repeat(32), 'f'.repeat(31), 'f'.repeat(33), 'agent_error', 'a-b', 'abc\n'];
      for (let i = 0; i < 4000; i++) {
        const length = [rand(4), 15, 16, 17, 31, 32, 33][rand(7)]!;
        // Mostly characters the pattern takes, so long valid texts come up too.
        const good = field === 'source' ? 'az_-' : field === 'event' ? 'abz' : '09af';
        texts.push(Array.from({ length }, () => (rand(8) === 0 ? alphabet[rand(alphabet.length)]! : good[rand(good.length)]!)).join(''));
      }
      for (const text of texts) expect([field, text, validateRecord({ ...valid, [field]: text }).ok]).toEqual([field, text, pattern.test(text)]);
    }
  });

  it('names the first bounded field over its bound, in the order of BOUNDED_STRING_FIELDS', () => {
    for (let i = 0; i < BOUNDED_STRING_FIELDS.length; i++) {
      for (let j = i; j < BOUNDED_STRING_FIELDS.length; j++) {
        const over = (f: (typeof BOUNDED_STRING_FIELDS)[number]) => ((f === 'source' || f === 'event') ? 'a' : 'x').repeat(RECORD_LIMITS[f] + 1);
        const [a, b] = [BOUNDED_STRING_FIELDS[i]!, BOUNDED_STRING_FIELDS[j]!];
        expect(validateRecord({ ...valid, [a]: over(a), [b]: over(b) })).toEqual({ ok: false, reason: `${a} exceeds ${RECORD_LIMITS[a]} bytes` });
      }
    }
  });

  it('answers each required string and the severity as before', () => {
    for (const f of ['id', 'orgId', 'agentId', 'agentName', 'executionId']) {
      for (const bad of [undefined, '', 5, null, {}]) expect(validateRecord({ ...valid, [f]: bad })).toEqual({ ok: false, reason: `${f} must be a non-empty string` });
    }
    // The first missing one is named.
    expect(validateRecord({ ...valid, agentName: '', orgId: 1 })).toEqual({ ok: false, reason: 'orgId must be a non-empty string' });
    for (const severity of ['debug', 'info', 'warn', 'error']) expect(validateRecord({ ...valid, severity }).ok).toBe(true);
    for (const severity of ['INFO', 'fatal', '', 1, undefined, 'constructor', 'toString']) {
      expect(validateRecord({ ...valid, severity })).toEqual({ ok: false, reason: 'severity must be debug, info, warn or error' });
    }
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

describe('parseRfc3339', () => {
  // The rule as the regular expression and Date.parse state it: the oracle for the hand-read common form.
  const RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
  const reference = (text: string): number => {
    const m = RE.exec(text);
    if (!m) return NaN;
    const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as number[];
    if (y! < 1 || !isCalendarDay(y!, mo!, d!) || h! > 23 || mi! > 59 || s! > 59) return NaN;
    if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return NaN;
    return Date.parse(text);
  };

  it('reads every timestamp as the rule does, the common UTC form and all others', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const pad = (v: number, w: number) => String(v).padStart(w, '0');
    const texts = ['2026-11-30T01:02:03Z', '2026-11-30T01:02:03.456Z', '0050-06-01T00:00:00Z', '0099-12-31T23:59:59.999Z', '0100-01-01T00:00:00.000Z',
      '0000-01-01T00:00:00Z', '2024-02-29T12:00:00Z', '2026-02-29T12:00:00Z', '2026-02-30T00:00:00.000Z', '2026-11-30T24:00:00Z', '2026-11-30T23:60:00Z',
      '2026-11-30T23:59:60Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-11-00T00:00:00Z', '2026-11-30t01:02:03z', '2026-11-30 01:02:03Z',
      '2026-11-30T01:02:03.4Z', '2026-11-30T01:02:03.45678Z', '2026-11-30T01:02:03+01:30', '2026-11-30T01:02:03.123-23:59', '2026-11-30T01:02:03+24:00',
      '2026-1a-30T01:02:03Z', '2026-11-30T01:02:03.12aZ', '+02026-11-30T01:02:03Z', '2026-11-30T01:02:03', '2026-11-30T01:02:03.Z', '2026-11-30X01:02:03Z',
      '2026-11-30T01-02-03Z', '2026/11/30T01:02:03Z', '2026-11-30T01:02:03.123', '٢٠٢٦-11-30T01:02:03Z', ''];
    for (let i = 0; i < 5000; i++) {
      const base = `${pad(rand(10000), 4)}-${pad(rand(14), 2)}-${pad(rand(33), 2)}T${pad(rand(26), 2)}:${pad(rand(62), 2)}:${pad(rand(62), 2)}`;
      const frac = ['', `.${pad(rand(1000), 3)}`, `.${rand(10)}`][rand(3)];
      texts.push(base + frac + ['Z', 'Z', `+${pad(rand(25), 2)}:${pad(rand(61), 2)}`, 'z'][rand(4)]);
    }
    for (const t of texts) expect([t, parseRfc3339(t)]).toEqual([t, reference(t)]);
  });
});

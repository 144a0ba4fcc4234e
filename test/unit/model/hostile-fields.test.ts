/** Bounds of record fields, calendar checks, scrub rule costs, signing secrets and seed files under hostile input. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeRecord } from '../../../src/model/record.js';
import { RECORD_LIMITS } from '../../../src/model/record-limits.js';
import { checkScrubPattern } from '../../../src/model/scrub-rules.js';
import { compileScrubber, SCRUBBED } from '../../../src/shape/scrubber.js';
import { whsecProblem } from '../../../src/sign/standard-webhooks.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { record } from '../../helpers/records.js';

const decode = (p: Record<string, unknown>) => decodeRecord(JSON.stringify({ ...record(), ...p }));

describe('record field bounds', () => {
  it('refuses every bounded string field one byte past its bound, in UTF-8 bytes, and accepts it at the bound', () => {
    for (const f of ['id', 'orgId', 'agentId', 'agentName', 'agentVersion', 'executionId'] as const) {
      const max = RECORD_LIMITS[f];
      expect(decode({ [f]: 'x'.repeat(max) }).ok, f).toBe(true);
      expect(decode({ [f]: 'x'.repeat(max + 1) }), f).toEqual({ ok: false, reason: `${f} exceeds ${max} bytes` });
      // Three bytes a character: a third of the bound in characters is already past it.
      expect(decode({ [f]: '€'.repeat(Math.floor(max / 3) + 1) }).ok, f).toBe(false);
    }
    expect(decode({ agentId: 'a'.repeat(100_000) })).toEqual({ ok: false, reason: 'agentId exceeds 128 bytes' });
    expect(decode({ source: 'a'.repeat(65) }).ok).toBe(false);
    expect(decode({ event: 'a'.repeat(65) }).ok).toBe(false);
    expect(decode({ attributes: { ['k'.repeat(257)]: 1 } }).ok).toBe(false);
    expect(decode({ attributes: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, i])) }).ok).toBe(false);
  });

  it('dead-letters timestamps that name no real instant instead of rolling them over', () => {
    for (const ts of ['2026-02-30T00:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T10:00:00Z', '2026-01-01T24:00:00Z', '2026-13-01T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-01T00:00:00+24:00']) {
      expect(decode({ timestamp: ts }), ts).toEqual({ ok: false, reason: 'timestamp must be RFC 3339' });
    }
    for (const ts of ['2028-02-29T00:00:00Z', '2026-12-31T23:59:59.999+14:00', '2026-06-30t12:00:00z']) expect(decode({ timestamp: ts }).ok, ts).toBe(true);
  });
});

describe('scrub rule cost', () => {
  it('refuses counted repetition whose compiled program would stall a scrub, alone and across a drain', () => {
    expect(checkScrubPattern('.{1000}'.repeat(36)).ok).toBe(false);
    expect(checkScrubPattern('.{500}.{500}').ok).toBe(false);
    expect(checkScrubPattern('\\p{L}{64}').ok).toBe(false);
    expect(checkScrubPattern('.{256}').ok).toBe(true);
    expect(checkScrubPattern('sk_[A-Za-z0-9]{32}').ok).toBe(true);
  });

  it('reads \\Q...\\E spans as literals, so a quoted parenthesis cannot hide a nested quantifier', () => {
    expect(checkScrubPattern('(x\\Q)\\E+)+')).toEqual({ ok: false, reason: 'nested quantifiers are not allowed' });
    expect(checkScrubPattern('\\Q(a+)+\\E').ok).toBe(true);
  });
});

describe('whsec_ secrets', () => {
  it('must be strict base64 of 24 to 64 bytes', () => {
    expect(whsecProblem('whsec_' + '!'.repeat(20))).toMatch(/base64/);
    expect(whsecProblem('whsec_AAAA')).toMatch(/24 to 64 bytes/);
    expect(whsecProblem('whsec_' + Buffer.alloc(65).toString('base64'))).toMatch(/24 to 64 bytes/);
    expect(whsecProblem('whsec_' + Buffer.alloc(24, 7).toString('base64'))).toBeUndefined();
    expect(whsecProblem('whsec_' + Buffer.alloc(32, 7).toString('base64'))).toBeUndefined();
    expect(whsecProblem('a plain secret without the prefix')).toBeUndefined();
  });
});

describe('seed files', () => {
  it('name the file and the field holding a NUL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const file = join(dir, 'nul.json');
    writeFileSync(file, JSON.stringify({ orgs: [{ id: 'org_a', name: 'A\u0000' }] }));
    await expect(readSeedFile(file)).rejects.toThrow(`${file}: orgs[0].name holds a NUL character`);
  });

  it('refuse bytes that are not UTF-8, naming the file and the byte offset, rather than seeding U+FFFD', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-'));
    const file = join(dir, 'latin1.json');
    const text = JSON.stringify({ orgs: [{ id: 'org_a', name: 'Caf\u00e9' }] });
    // Latin-1: the é is one byte, 0xE9, which UTF-8 reads as the start of a sequence that never comes.
    writeFileSync(file, Buffer.from(text, 'latin1'));
    await expect(readSeedFile(file)).rejects.toThrow(`${file} is not valid UTF-8: byte offset ${Buffer.from(text, 'latin1').indexOf(0xe9)}`);
  });
});

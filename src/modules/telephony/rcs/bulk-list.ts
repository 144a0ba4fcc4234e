/**
 * The bulk capability check's list (spec 02 part 4.3; contract telephony T5):
 * 500 to 10,000 distinct E.164 numbers. Checked cheapest first, so a list the
 * count or the syntax refuses costs next to nothing: the count before any
 * entry; `+` and digits for every entry before any is parsed; only then each
 * entry's numbering plan (libphonenumber-js, some 100 µs a number), in slices
 * of a few milliseconds that give the event loop back in between, so one
 * list of 10,000 never holds up the process's other requests for the whole
 * of its check.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { fieldRules } from '../errors.js';
import { msisdnOf } from '../numbers/e164.js';

export const BULK_NUMBERS = { min: 500, max: 10_000 } as const;
/** The numbering-plan checks run this long at most before the event loop gets a turn. */
export const BULK_SLICE_MS = 5;

const E164_SYNTAX = /^\+[1-9]\d{1,14}$/;
const ARRAY_RULE = 'phoneNumbers must be an array of E.164 phone numbers';
const invalidRule = (i: number) => `phoneNumbers.${i} must be an E.164 phone number (+ and digits)`;

/**
 * The body's `phoneNumbers`, or the failed rules (400): not an array; a count outside 500-10,000
 * (alone, the entries unread); else the first entry that is not `+` and digits, or the first that
 * no numbering plan allows, and the first entry given before.
 */
export async function bulkList(body: unknown): Promise<string[]> {
  const list = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).phoneNumbers : undefined;
  if (!Array.isArray(list)) throw fieldRules('phoneNumbers', [ARRAY_RULE]);
  if (list.length < BULK_NUMBERS.min || list.length > BULK_NUMBERS.max) {
    throw fieldRules('phoneNumbers', [`phoneNumbers must contain ${BULK_NUMBERS.min} to ${BULK_NUMBERS.max.toLocaleString('en-US')} numbers`]);
  }
  const seen = new Set<string>();
  let invalid: number | undefined;
  let duplicate: number | undefined;
  for (let i = 0; i < list.length; i++) {
    const n: unknown = list[i];
    if (typeof n !== 'string' || !E164_SYNTAX.test(n)) {
      invalid ??= i;
      continue;
    }
    if (seen.has(n)) duplicate ??= i;
    seen.add(n);
  }
  // Every entry reads as E.164: which of them does a numbering plan allow?
  if (invalid === undefined) invalid = await firstImpossible(list as string[]);
  const rules: string[] = [];
  if (invalid !== undefined) rules.push(invalidRule(invalid));
  if (duplicate !== undefined) rules.push(`phoneNumbers must not contain duplicates (phoneNumbers.${duplicate} is given before)`);
  if (rules.length > 0) throw fieldRules('phoneNumbers', rules);
  return list as string[];
}

/** The index of the first number no numbering plan allows, checked in slices of BULK_SLICE_MS. */
async function firstImpossible(list: readonly string[]): Promise<number | undefined> {
  let sliceStart = performance.now();
  for (let i = 0; i < list.length; i++) {
    if (msisdnOf(list[i]!) === undefined) return i;
    if (performance.now() - sliceStart >= BULK_SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return undefined;
}

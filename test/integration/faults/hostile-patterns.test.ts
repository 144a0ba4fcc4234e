/**
 * Catastrophic backtracking (hostile input). Scrub rules that a
 * backtracking engine could be made to run for hours are either refused at
 * create and at PATCH (`DRAIN_SCRUB_RULE_INVALID`: nested quantifiers,
 * backreferences, lookarounds, which RE2 cannot or the spec will not take),
 * or accepted and harmless because RE2 matches in linear time.
 *
 * The accepted ones run here through the real delivery path on 100 KB
 * inputs built to be exponential (or of a high polynomial degree) for a
 * backtracking engine: `(a|aa)*c` on 100,000 `a`s takes a backtracking
 * engine on the order of fib(100000) steps. A regression to such an engine
 * would not finish inside the test timeout; no timing is asserted. The
 * built-in credential patterns, which run on V8's engine for drains without
 * customer rules, are fed their worst inputs the same way.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, type HttpsReceiver } from '../../helpers/receiver.js';
import { startReceiverApp, type ReceiverApp } from '../../helpers/receiver-app.js';
import { ingest, record } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';
const INPUT = 100_000;

/** Accepted patterns that are exponential or high-degree polynomial for a backtracking engine on the inputs below. */
const ACCEPTED_EVIL = [
  { id: 'alt-overlap', pattern: '(a|aa)*c' },
  { id: 'alt-same', pattern: '(a|a)*c' },
  { id: 'alt-classes', pattern: '(.|\\s)*!' },
  { id: 'poly', pattern: 'a*a*a*a*a*a*a*c' },
  { id: 'alt-plus-end', pattern: '(a|aa)+$x' },
];

/** Refused at create and PATCH: RE2 cannot compile them, or the spec's limits forbid them. */
const REFUSED = [
  ['nested quantifier', '(x+x+)+y'],
  ['nested quantifier over an optional', '(a|a?)+b'],
  ['nested quantifier in a word pattern', '(\\w+\\s?)*$'],
  ['doubly nested group', '((a+))+'],
  ['nested counted quantifier', '(a{2,}){3,}'],
  ['backreference', '(a+)\\1'],
  ['named backreference', '(?<q>a+)\\k<q>b'],
  ['lookahead', '(?=(a+))\\1'],
  ['negative lookahead', '(?!ab)a+'],
  ['lookbehind', '(?<=a+)b'],
  ['negative lookbehind', '(?<!a)b+'],
];

describe('catastrophic backtracking in scrub rules', () => {
  let ctx: ReceiverApp;
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    ctx = await startReceiverApp();
    ({ app, receiver } = ctx);
  });
  afterAll(() => ctx?.stop());
  afterEach(() => ctx.deleteDrains());

  /** The delivered records at `path`, by id, once every id in `ids` has arrived. */
  async function deliveredAt(path: string, ids: string[]): Promise<Map<string, Record<string, unknown>>> {
    return waitFor(() => {
      const byId = new Map<string, Record<string, unknown>>();
      for (const r of receiver.batches().filter((b) => b.path === path)) for (const rec of parseBatch(r).records) byId.set(rec.id, rec);
      return ids.every((id) => byId.has(id)) ? byId : undefined;
    }, { what: `records at ${path}`, timeoutMs: 20_000 });
  }

  it.each(REFUSED)('refuses %s (%s) at create and at PATCH', async (_what, pattern) => {
    const create = await app.request('POST', ORG, { token: T, body: { name: 'evil', type: 'http', endpoint: `${receiver.url}/evil`, scrubRules: [{ id: 'evil', pattern }] } });
    expect(create.status).toBe(422);
    expect(create.body).toMatchObject({ statusCode: 422, code: 'DRAIN_SCRUB_RULE_INVALID', field: 'scrubRules[0].pattern' });
    const ok = await app.request('POST', ORG, { token: T, body: { name: 'plain', type: 'http', endpoint: `${receiver.url}/plain` } });
    expect(ok.status).toBe(201);
    ctx.track(ok.body.id);
    const before = (await app.request('GET', `${ORG}/${ok.body.id}`, { token: T })).body;
    const patch = await app.request('PATCH', `${ORG}/${ok.body.id}`, { token: T, body: { scrubRules: [{ id: 'fine', pattern: 'tok_\\d+' }, { id: 'evil', pattern }] } });
    expect(patch.status).toBe(422);
    expect(patch.body).toMatchObject({ code: 'DRAIN_SCRUB_RULE_INVALID', field: 'scrubRules[1].pattern' });
    // Nothing of the refused PATCH was applied.
    expect((await app.request('GET', `${ORG}/${ok.body.id}`, { token: T })).body).toEqual(before);
  });

  it('accepts patterns only a backtracking engine would choke on, and scrubs 100 KB hostile inputs through the delivery path', async () => {
    const id = await ctx.verifiedDrain({ name: 'evil-ok', endpoint: `${receiver.url}/evil-ok`, format: 'json', scrubRules: ACCEPTED_EVIL });
    const noMatch = record({ message: 'a'.repeat(INPUT) }); // every rule fails only at the very end
    const spaces = record({ message: ' '.repeat(INPUT) }); // (.|\s)* has two ways through each character
    const matchAll = record({ message: 'a'.repeat(INPUT) + 'c' }); // matched whole: one hit
    const inAttribute = record({ message: 'short', attributes: { blob: 'a'.repeat(INPUT) + 'b' } });
    await ingest(app, [noMatch, spaces, matchAll, inAttribute]);

    const got = await deliveredAt('/evil-ok', [noMatch.id, spaces.id, matchAll.id, inAttribute.id]);
    expect(got.get(noMatch.id)!.body).toBe(noMatch.message);
    expect(got.get(spaces.id)!.body).toBe(spaces.message);
    expect(got.get(matchAll.id)!.body).toBe('[scrubbed]');
    expect((got.get(inAttribute.id)!.attributes as Record<string, string>).blob).toBe(inAttribute.attributes!.blob);
    const rows = await waitFor(async () => {
      const r = (await app.request('GET', `${ORG}/${id}/deliveries?kind=batch`, { token: T })).body.deliveries as { ok: boolean; scrubHits: number; recordCount: number }[];
      // Every batch's row: a row is written after its batch's answer, so the last may lag the receiver.
      return r.every((d) => d.ok) && r.reduce((n, d) => n + d.recordCount, 0) === 4 ? r : undefined;
    }, { what: 'the delivery rows of the four records' });
    expect(rows.reduce((n, r) => n + r.scrubHits, 0)).toBe(1);
  });

  it('runs the built-in patterns (V8 engine, no customer rules) over their worst inputs in linear time', async () => {
    await ctx.verifiedDrain({ name: 'builtins', endpoint: `${receiver.url}/builtins`, format: 'json' });
    // Each built-in is a literal prefix and one class: the worst a backtracking engine can do is rescan a run once per prefix.
    const inputs = [
      'bearer' + '\t'.repeat(INPUT) + '!', // \s+ then no token: backtracks over the run once
      'Bearer '.repeat(INPUT / 7), // a prefix at every 7th character, each followed by a too-short token
      'sk_abcdefghijk '.repeat(INPUT / 15), // key prefixes one character short of the 12 needed
      'whsec_' + '='.repeat(7) + ' whsec_'.repeat(INPUT / 7),
      'key-' + '-'.repeat(INPUT) + ' token_' + 'x'.repeat(INPUT / 2), // one long key: a single match
    ];
    const sent = inputs.map((message) => record({ message }));
    await ingest(app, sent);
    const got = await deliveredAt('/builtins', sent.map((r) => r.id));
    expect(got.get(sent[0]!.id)!.body).toBe(inputs[0]);
    expect(got.get(sent[1]!.id)!.body).toBe(inputs[1]);
    expect(got.get(sent[2]!.id)!.body).toBe(inputs[2]);
    expect(got.get(sent[3]!.id)!.body).toBe(inputs[3]);
    expect(got.get(sent[4]!.id)!.body).toBe('[scrubbed] [scrubbed]');
  });
});

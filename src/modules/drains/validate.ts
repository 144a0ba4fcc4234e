/**
 * The rules of a drain body (spec 01 part 4.1, errors of part 7.3) that its
 * schema (schemas.ts) cannot state: names that display as other text or as
 * nothing, headers the service sets itself or that govern the connection,
 * repeated header names and rule ids, whsec_ secrets holding a key of the
 * right size, scrub patterns that compile and are bounded, and the endpoint's
 * address. The schema has refused every structural problem already, and the
 * kernel text Postgres cannot hold (api/kernel/storable-text.ts); these answer
 * 400 DRAIN_VALIDATION_FAILED or their own 422 codes.
 */
import type { Environment } from '../../model/drain.js';
import { checkEndpoint } from '../../security/ssrf-guard.js';
import { checkScrubPattern, MAX_SCRUB_DRAIN_COST, scrubRuleCost } from '../../model/scrub-rules.js';
import { whsecProblem } from '../../security/webhook-secret.js';
import { DrainErrors, drainValidation } from './errors.js';
import type { DrainCreateBody, DrainPatchBody } from './schemas.js';

/** A create or PATCH body once checked: `sources` null for every source. */
export type DrainInput = Omit<Partial<DrainCreateBody>, 'sources' | 'sampling' | 'redact' | 'scrubRules'> &
  Pick<DrainPatchBody, 'sampling' | 'redact' | 'scrubRules'> & { sources?: string[] | null };

/** Headers the service sets itself; a drain may not override them. */
const RESERVED_HEADERS = new Set([
  'content-type', 'content-encoding', 'content-length', 'host', 'connection', 'transfer-encoding', 'user-agent',
  'x-svc-schema', 'x-svc-batch-id', 'x-svc-verify', 'logdrain-replay', 'webhook-id', 'webhook-timestamp', 'webhook-signature',
]);

/**
 * Headers that govern one connection rather than the request (RFC 9110 section 7.6.1, and the
 * proxy ones): undici refuses to send them, so a drain carrying one failed every delivery with a
 * misleading `connect` error. Refused when given instead.
 */
const HOP_BY_HOP_HEADERS = new Set(['expect', 'upgrade', 'keep-alive', 'te', 'trailer', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate']);
/** Bidirectional overrides and isolates: a name holding them displays as other text than it is. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/**
 * Names that display as nothing: only spaces and line breaks (White_Space), characters a renderer
 * shows nothing for (Default_Ignorable_Code_Point: zero-width spaces and joiners, Hangul fillers,
 * variation selectors, tag characters, ...) and noncharacters (U+FDD0-FDEF, U+xFFFE and U+xFFFF).
 * Unicode's own properties, so every such code point is covered, not the ones somebody listed; and
 * U+2800 BRAILLE PATTERN BLANK, a symbol no property marks that draws as a space.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}\u2800]*$/u;

/** Applies the rules beyond the schema to a create or PATCH body the schema accepted. */
export function checkDrainBody(body: DrainCreateBody | DrainPatchBody): DrainInput {
  const { sources, environments, headers, scrubRules, ...rest } = body as DrainCreateBody;
  const out: DrainInput = rest;
  if (body.name !== undefined) {
    if (INVISIBLE_ONLY.test(body.name) || /[\x00-\x1f\x7f-\x9f]/.test(body.name) || BIDI_CONTROLS.test(body.name)) {
      throw drainValidation('name', ['name must be printable, visible and free of bidirectional controls']);
    }
  }
  if (body.secret !== undefined) {
    const problem = whsecProblem(body.secret);
    if (problem) throw drainValidation('secret', [problem]);
  }
  if (headers !== undefined) {
    const seen = new Set<string>();
    out.headers = headers.map((h, i) => {
      const lower = h.name.toLowerCase();
      if (RESERVED_HEADERS.has(lower)) throw drainValidation(`headers[${i}].name`, [`${h.name} is set by the service`]);
      if (HOP_BY_HOP_HEADERS.has(lower) || lower.startsWith('proxy-')) {
        throw drainValidation(`headers[${i}].name`, [`${h.name} controls the connection, not the request; a delivery cannot carry it`]);
      }
      if (seen.has(lower)) throw drainValidation(`headers[${i}].name`, [`${h.name} appears twice`]);
      seen.add(lower);
      // Only the two fields: anything else an entry held stays out of the store.
      return { name: h.name, value: h.value };
    });
  }
  if (sources !== undefined) out.sources = sources.includes('*') ? null : sources;
  if (environments !== undefined) out.environments = [...new Set(environments)] as Environment[];
  if (scrubRules !== undefined) out.scrubRules = scrubRules === null ? null : checkScrubRules(scrubRules);
  return out;
}

/** Rule ids once each; every pattern compiles and is bounded, and so are the rules together. */
function checkScrubRules(rules: NonNullable<DrainCreateBody['scrubRules']>): NonNullable<DrainInput['scrubRules']> {
  const ids = new Set<string>();
  const checked = rules.map((r, i) => {
    if (ids.has(r.id)) throw drainValidation(`scrubRules[${i}].id`, [`rule id ${r.id} appears twice`]);
    ids.add(r.id);
    const check = checkScrubPattern(r.pattern, r.flags);
    if (!check.ok) {
      throw DrainErrors.DRAIN_SCRUB_RULE_INVALID(`scrub rule ${i}: ${check.reason}`, { field: `scrubRules[${i}].pattern` });
    }
    return r.flags === undefined ? { id: r.id, pattern: r.pattern } : { id: r.id, pattern: r.pattern, flags: r.flags };
  });
  // The rules compile into one alternation, which every scrubbed string runs through: bounded together.
  const cost = checked.reduce((n, r) => n + scrubRuleCost(r.pattern), 0);
  if (cost > MAX_SCRUB_DRAIN_COST) {
    throw DrainErrors.DRAIN_SCRUB_RULE_INVALID(`scrub rules cost ${cost} together; at most ${MAX_SCRUB_DRAIN_COST}`, { field: 'scrubRules' });
  }
  return checked;
}

/** Endpoint rules: HTTPS, not private/loopback/link-local/metadata (in any notation, or by resolution). */
export async function checkDrainEndpoint(endpoint: string, allowHosts: readonly string[]): Promise<string> {
  const check = await checkEndpoint(endpoint, { allowHosts });
  if (!check.ok) {
    // Refused for its address (not its scheme or its spelling): name the way out for local testing.
    const message = check.addressClass ? `${check.reason} ${allowHostsHint(endpoint)}` : check.reason;
    throw DrainErrors.DRAIN_ENDPOINT_INVALID(message, { field: 'endpoint' });
  }
  return check.url.toString();
}

/** How an operator exempts a destination's host for local testing (CONTRACT part 2). */
function allowHostsHint(endpoint: string): string {
  let host = '';
  try {
    host = new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
  } catch {
    /* checkEndpoint parsed it already */
  }
  return `For local testing, the server's operator can exempt this host by starting logdrain with DRAIN_ENDPOINT_ALLOW_HOSTS=${host || '<host>'} (comma-separated; HTTPS is still required).`;
}

/**
 * Validation of drain create and update bodies (spec 01 part 4.1, errors of
 * part 7.3). Structural problems answer 400 DRAIN_VALIDATION_FAILED naming
 * the field; rule violations answer their own 422 codes.
 */
import {
  DRAIN_TYPES, ENVIRONMENTS, SEVERITIES, type DrainType, type Environment, type ScrubRule, type Severity,
} from '../../model/drain.js';
import { checkEndpoint } from '../../security/ssrf-guard.js';
import { checkScrubPattern, MAX_SCRUB_DRAIN_COST, scrubRuleCost } from '../../model/scrub-rules.js';
import { whsecProblem } from '../../security/webhook-secret.js';
import { holdsText, LONE_SURROGATE } from '../../model/record.js';
import { DrainErrors, drainValidation } from './errors.js';

export const VENDOR_A_SITES = ['us1', 'us3', 'us5', 'eu1', 'ap1', 'gov'] as const;
export const LIMITS = { headers: 10, redact: 32, scrubRules: 20, name: 64, secret: 256, headerValue: 4096, sources: 32, agents: 1000 } as const;

export interface DrainInput {
  name?: string;
  type?: DrainType;
  endpoint?: string;
  site?: string;
  format?: 'json' | 'ndjson';
  headers?: { name: string; value: string }[];
  secret?: string;
  sources?: string[] | null;
  minSeverity?: Severity;
  agents?: '*' | string[];
  environments?: Environment[];
  sampling?: { debug: number } | null;
  includeContent?: boolean;
  includeContentAck?: boolean;
  redact?: string[] | null;
  scrubRules?: ScrubRule[] | null;
}

const CREATE_FIELDS = new Set([
  'name', 'type', 'endpoint', 'site', 'format', 'headers', 'secret', 'sources', 'minSeverity', 'agents',
  'environments', 'sampling', 'includeContent', 'includeContentAck', 'redact', 'scrubRules',
]);
const NULLABLE_ON_PATCH = new Set(['sampling', 'redact', 'scrubRules']);

/** NUL, and a UTF-16 surrogate without its pair: what Postgres text and JSON cannot hold. */
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

/** Whether a JSON value holds unstorable text in any string or key, at any depth. */
export const holdsUnstorableText = (value: unknown): boolean => holdsText(value, UNSTORABLE);

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
const SOURCE_NAME = /^[a-z_-]{1,64}$/;
/** Headers the service sets itself; a drain may not override them. */
const RESERVED_HEADERS = new Set([
  'content-type', 'content-encoding', 'content-length', 'host', 'connection', 'transfer-encoding', 'user-agent',
  'x-svc-schema', 'x-svc-batch-id', 'x-svc-verify', 'webhook-id', 'webhook-timestamp', 'webhook-signature',
]);

/**
 * Headers that govern one connection rather than the request (RFC 9110 section 7.6.1, and the
 * proxy ones): undici refuses to send them, so a drain carrying one failed every delivery with a
 * misleading `connect` error. Refused when given instead.
 */
const HOP_BY_HOP_HEADERS = new Set(['expect', 'upgrade', 'keep-alive', 'te', 'trailer', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate']);
/** Bidirectional overrides and isolates: a name holding them displays as other text than it is. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** Characters that display as nothing: a name of only these (and spaces) is blank to a reader. */
const INVISIBLE = /[\s\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]/g;

/** Parses a create (mode 'create') or PATCH (mode 'patch') body into a typed input, field by field. */
export function parseDrainBody(body: unknown, mode: 'create' | 'patch'): DrainInput {
  if (!isObj(body)) throw drainValidation('body', ['body must be a JSON object']);
  for (const k of Object.keys(body)) {
    if (!CREATE_FIELDS.has(k)) throw drainValidation(k, [`${k} is not a drain field`]);
    if (mode === 'patch' && k === 'type') throw drainValidation('type', ['type cannot be changed after creation']);
    if (body[k] === null && !(mode === 'patch' && NULLABLE_ON_PATCH.has(k))) throw drainValidation(k, [`${k} must not be null`]);
  }
  const out: DrainInput = {};
  const str = (k: string, min: number, max: number): string | undefined => {
    const v = body[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.length < min || v.length > max) {
      throw drainValidation(k, [`${k} must be a string of ${min} to ${max} characters`]);
    }
    return v;
  };
  const oneOf = <T extends string>(k: string, values: readonly T[]): T | undefined => {
    const v = body[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !values.includes(v as T)) throw drainValidation(k, [`${k} must be one of ${values.join(', ')}`]);
    return v as T;
  };
  const bool = (k: string): boolean | undefined => {
    const v = body[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') throw drainValidation(k, [`${k} must be a boolean`]);
    return v;
  };
  const list = (k: string, max: number, item: (v: unknown, i: number) => string): string[] | undefined => {
    const v = body[k];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) throw drainValidation(k, [`${k} must be an array`]);
    if (v.length > max) throw drainValidation(k, [`${k} holds at most ${max} entries`]);
    return v.map(item);
  };

  const name = str('name', 1, LIMITS.name);
  if (name !== undefined) {
    if (name.replace(INVISIBLE, '').length === 0 || /[\x00-\x1f\x7f-\x9f]/.test(name) || BIDI_CONTROLS.test(name)) {
      throw drainValidation('name', ['name must be printable, visible and free of bidirectional controls']);
    }
    out.name = name;
  }
  const type = oneOf('type', DRAIN_TYPES);
  if (type) out.type = type;
  const endpoint = str('endpoint', 1, 2048);
  if (endpoint !== undefined) out.endpoint = endpoint;
  const site = oneOf('site', VENDOR_A_SITES);
  if (site) out.site = site;
  const format = oneOf('format', ['json', 'ndjson'] as const);
  if (format) out.format = format;
  const secret = str('secret', 16, LIMITS.secret);
  if (secret !== undefined) {
    if (/[\x00-\x1f\x7f]/.test(secret)) throw drainValidation('secret', ['secret must not contain control characters']);
    const problem = whsecProblem(secret);
    if (problem) throw drainValidation('secret', [problem]);
    out.secret = secret;
  }
  if (body.headers !== undefined) {
    const seen = new Set<string>();
    const hs = body.headers;
    if (!Array.isArray(hs)) throw drainValidation('headers', ['headers must be an array of {name, value}']);
    if (hs.length > LIMITS.headers) throw drainValidation('headers', [`headers holds at most ${LIMITS.headers} entries`]);
    out.headers = hs.map((h, i) => {
      if (!isObj(h) || typeof h.name !== 'string' || typeof h.value !== 'string') {
        throw drainValidation(`headers[${i}]`, ['each header must be {name: string, value: string}']);
      }
      if (!HEADER_NAME.test(h.name)) throw drainValidation(`headers[${i}].name`, ['header name must be 1-64 letters, digits or hyphens']);
      const lower = h.name.toLowerCase();
      if (RESERVED_HEADERS.has(lower)) throw drainValidation(`headers[${i}].name`, [`${h.name} is set by the service`]);
      if (HOP_BY_HOP_HEADERS.has(lower) || lower.startsWith('proxy-')) {
        throw drainValidation(`headers[${i}].name`, [`${h.name} controls the connection, not the request; a delivery cannot carry it`]);
      }
      if (seen.has(lower)) throw drainValidation(`headers[${i}].name`, [`${h.name} appears twice`]);
      seen.add(lower);
      if (h.value.length === 0 || h.value.length > LIMITS.headerValue || /[\r\n\x00]/.test(h.value) || !/^[\t\x20-\x7e\x80-\xff]*$/.test(h.value)) {
        throw drainValidation(`headers[${i}].value`, ['header value must be 1-4096 visible characters without CR, LF or NUL']);
      }
      return { name: h.name, value: h.value };
    });
  }
  if (body.sources !== undefined) {
    out.sources = list('sources', LIMITS.sources, (v) => {
      if (typeof v !== 'string' || (v !== '*' && !SOURCE_NAME.test(v))) throw drainValidation('sources', ['each source is lowercase letters, _ or -']);
      return v;
    })!;
    if (out.sources.includes('*')) out.sources = null;
  }
  const minSeverity = oneOf('minSeverity', SEVERITIES);
  if (minSeverity) out.minSeverity = minSeverity;
  if (body.agents !== undefined) {
    if (body.agents === '*') out.agents = '*';
    else {
      out.agents = list('agents', LIMITS.agents, (v) => {
        if (typeof v !== 'string' || v.length === 0 || v.length > 128) throw drainValidation('agents', ['agents is "*" or a list of agent ids']);
        return v;
      })!;
    }
  }
  if (body.environments !== undefined) {
    const envs = list('environments', 2, (v) => {
      if (!ENVIRONMENTS.includes(v as Environment)) throw drainValidation('environments', ['environments holds production and/or sandbox']);
      return v as string;
    })!;
    if (envs.length === 0) throw drainValidation('environments', ['environments must not be empty']);
    out.environments = [...new Set(envs)] as Environment[];
  }
  if (body.sampling !== undefined) {
    const s = body.sampling;
    if (s === null) out.sampling = null;
    else {
      if (!isObj(s) || Object.keys(s).some((k) => k !== 'debug') || typeof s.debug !== 'number' || !(s.debug > 0 && s.debug <= 1)) {
        throw drainValidation('sampling', ['sampling is {debug: n} with 0 < n <= 1; only debug is sampleable']);
      }
      out.sampling = { debug: s.debug };
    }
  }
  const includeContent = bool('includeContent');
  if (includeContent !== undefined) out.includeContent = includeContent;
  const ack = bool('includeContentAck');
  if (ack !== undefined) out.includeContentAck = ack;
  if (body.redact !== undefined) {
    out.redact = body.redact === null ? null : list('redact', LIMITS.redact, (v) => {
      if (typeof v !== 'string' || v.length === 0 || v.length > 256) throw drainValidation('redact', ['each redact key is a non-empty string']);
      return v;
    })!;
  }
  if (body.scrubRules !== undefined) {
    if (body.scrubRules === null) out.scrubRules = null;
    else {
      const rules = body.scrubRules;
      if (!Array.isArray(rules)) throw drainValidation('scrubRules', ['scrubRules must be an array']);
      if (rules.length > LIMITS.scrubRules) throw drainValidation('scrubRules', [`scrubRules holds at most ${LIMITS.scrubRules} rules`]);
      const ids = new Set<string>();
      out.scrubRules = rules.map((r, i) => {
        if (!isObj(r) || typeof r.id !== 'string' || r.id.length === 0 || r.id.length > 64 || typeof r.pattern !== 'string' ||
          (r.flags !== undefined && typeof r.flags !== 'string') || Object.keys(r).some((k) => !['id', 'pattern', 'flags'].includes(k))) {
          throw drainValidation(`scrubRules[${i}]`, ['each rule is {id, pattern, flags?}']);
        }
        if (ids.has(r.id)) throw drainValidation(`scrubRules[${i}].id`, [`rule id ${r.id} appears twice`]);
        ids.add(r.id);
        const check = checkScrubPattern(r.pattern, r.flags as string | undefined);
        if (!check.ok) {
          throw DrainErrors.DRAIN_SCRUB_RULE_INVALID(`scrub rule ${i}: ${check.reason}`, { field: `scrubRules[${i}].pattern` });
        }
        return r.flags === undefined ? { id: r.id, pattern: r.pattern } : { id: r.id, pattern: r.pattern, flags: r.flags as string };
      });
      // The rules compile into one alternation, which every scrubbed string runs through: bounded together.
      const cost = out.scrubRules.reduce((n, r) => n + scrubRuleCost(r.pattern), 0);
      if (cost > MAX_SCRUB_DRAIN_COST) {
        throw DrainErrors.DRAIN_SCRUB_RULE_INVALID(`scrub rules cost ${cost} together; at most ${MAX_SCRUB_DRAIN_COST}`, { field: 'scrubRules' });
      }
    }
  }
  // Postgres text and jsonb cannot hold NUL or half a surrogate pair: refused for every field (after the
  // field rules, which name a header more precisely), before anything reaches the store, rather than
  // failing the write (jsonb) or being stored altered (text, as U+FFFD: a secret would no longer sign).
  for (const k of Object.keys(body)) {
    if (holdsUnstorableText(body[k])) throw drainValidation(k, [`${k} must not contain NUL characters or unpaired surrogates`]);
  }
  return out;
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

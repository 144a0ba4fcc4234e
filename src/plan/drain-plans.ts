/**
 * The worker's view of drain configuration: every live drain compiled into a
 * DrainPlan (selector, shaping options, encoder, opened headers and signing
 * keys) once per change of its row. The worker's current set of plans is kept
 * by drain-registry.ts.
 */
import { isDeliverable, type Drain, type ScrubRule } from '../model/drain.js';
import { compileSelector, type Selector } from '../select/selector.js';
import type { ShapeOptions } from '../shape/delivered-record.js';
import { compileScrubber, type Scrubber } from '../shape/scrubber.js';
import { otlpEncoder } from '../encode/otlp.js';
import type { Encoder } from '../encode/encoder.js';
import { jsonEncoder } from '../encode/json.js';
import { ndjsonEncoder } from '../encode/ndjson.js';
import { vendorAEncoder, vendorBEncoder } from '../encode/vendors.js';
import { sharedEncoding } from '../encode/shared-encoding.js';
import { signingKey } from '../sign/standard-webhooks.js';
import type { SecretBox } from '../security/secret-box.js';
import { destinationOf, type EncodingName } from '../destinations/index.js';

export interface DrainPlan {
  readonly drain: Drain;
  /** `id:version`: a batch is bound to the plan it was opened under. */
  readonly key: string;
  readonly deliverable: boolean;
  readonly select: Selector;
  readonly shape: ShapeOptions;
  /** Built-in and customer scrub rules, compiled once (RE2). */
  readonly scrubber: Scrubber;
  /**
   * Everything that decides a shaped, scrubbed record (content rule,
   * redaction, scrub patterns): plans of one organization with equal keys
   * deliver identical records, so the pipeline shapes a record once for them.
   */
  readonly shapeKey: string;
  readonly encoder: Encoder;
  readonly url: string;
  /** Configured headers, opened. */
  readonly headers: Readonly<Record<string, string>>;
  /** HMAC keys, newest first; empty for unsigned types. */
  readonly signingKeys: readonly Buffer[];
}

/** The plan key of a drain row: every write to a drain moves its `updatedAt` (a configuration change its version too). */
export const planKeyOf = (drain: Drain): string => `${drain.id}:${drain.version}:${drain.updatedAt.getTime()}`;

/** True while a secret rotation's window is open: plans compiled then sign with the previous secret too. */
export const rotationWindowOpen = (drain: Drain, nowMs: number): boolean =>
  drain.rotationExpiresAt !== null && drain.rotationExpiresAt.getTime() > nowMs;

export function compilePlan(drain: Drain, box: SecretBox, nowMs = Date.now()): DrainPlan {
  const headers: Record<string, string> = {};
  for (const h of drain.headers) headers[h.name.toLowerCase()] = box.open(h.value);
  const signingKeys: Buffer[] = [];
  if (destinationOf(drain.type).signs && drain.secret) {
    signingKeys.push(signingKey(box.open(drain.secret)));
    if (drain.previousSecret && rotationWindowOpen(drain, nowMs)) signingKeys.push(signingKey(box.open(drain.previousSecret)));
  }
  const shape = { includeContent: drain.selectors.includeContent, redact: drain.redact ? new Set(drain.redact) : null };
  return {
    drain,
    key: planKeyOf(drain),
    deliverable: isDeliverable(drain.state),
    select: compileSelector(drain.selectors, drain.sampling),
    shape,
    scrubber: compileScrubber(drain.scrubRules),
    shapeKey: shapeKeyOf(shape, drain.scrubRules),
    encoder: encoderFor(drain),
    url: drain.endpoint ?? '',
    headers,
    signingKeys,
  };
}

/**
 * The shape key: redaction as a sorted set, scrub rules as their patterns
 * and flags in order (ids and names do not change what is scrubbed; order
 * does, since the first matching rule wins).
 */
export function shapeKeyOf(shape: ShapeOptions, rules: readonly ScrubRule[] | null): string {
  return JSON.stringify([
    shape.includeContent,
    shape.redact ? [...shape.redact].sort() : null,
    (rules ?? []).map((r) => [r.pattern, r.flags ?? '']),
  ]);
}

/**
 * Each type fixes its encoding (src/destinations/); only `http` honours `format`. The encodings
 * without a batch id in the body are shared between drains sending the same batch
 * (encode/shared-encoding.ts).
 */
const ENCODERS: Record<EncodingName, Encoder> = {
  json: jsonEncoder,
  ndjson: ndjsonEncoder,
  'otlp-protobuf': sharedEncoding(otlpEncoder),
  'vendor-a-logs': sharedEncoding(vendorAEncoder),
  'vendor-b-logs': sharedEncoding(vendorBEncoder),
};

const encoderFor = (drain: Drain): Encoder => ENCODERS[destinationOf(drain.type).encoding(drain.format)];

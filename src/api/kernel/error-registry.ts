/**
 * Every error code the API answers with is defined once, here or by its
 * family through defineErrors(): its status, the fields its body carries
 * beside the common ones, and when it is answered. Handlers throw the
 * factories' AppError values; the error handler renders them in the shape of
 * the family's spec (kernel/error-shapes.ts). docs/api.md lists every code,
 * and a test holds the two together.
 */
import { AppError } from '../../errors.js';

export interface ErrorDefinition {
  status: number;
  /** Fields the body carries beyond the family shape's own (for example `field`, `requiredScope`). */
  fields?: readonly string[];
  /** When it is answered (the documentation's words). */
  when: string;
  /**
   * Answered without a `code` where the route's shape is spec 01 part 7.1.1's framework default
   * (`{statusCode, error, message}`: the persona routes' not-found answers, for example).
   */
  codeless?: boolean;
  /** Answered as `{statusCode, message}` alone, whatever the route's shape (the template catalog's 429, spec 03 part 8). */
  plain?: boolean;
}

export interface RegisteredError extends ErrorDefinition {
  code: string;
  family: string;
}

export type ErrorFactory = (message: string, details?: Record<string, unknown>) => AppError;

const registry = new Map<string, RegisteredError>();

/**
 * Registers a family's codes and returns a factory per code. A code belongs to one family: a second
 * definition of it is a programming error, refused when the module loads.
 */
export function defineErrors<const T extends Record<string, ErrorDefinition>>(family: string, defs: T): { readonly [K in keyof T]: ErrorFactory } {
  const factories: Record<string, ErrorFactory> = {};
  for (const [code, def] of Object.entries(defs)) {
    const known = registry.get(code);
    if (known && known.family !== family) throw new Error(`error code ${code} is defined by ${known.family} already`);
    registry.set(code, { code, family, ...def });
    factories[code] = (message, details = {}) => new AppError(def.status, code, message, details);
  }
  return factories as { readonly [K in keyof T]: ErrorFactory };
}

/** A registered code's definition, if any. */
export const definitionOf = (code: string): RegisteredError | undefined => registry.get(code);

/** Every code registered so far (modules register theirs when they load). */
export function registeredErrors(): readonly RegisteredError[] {
  return [...registry.values()];
}

/** The codes every family shares: authentication, access, request shape and budgets. */
export const KernelErrors = defineErrors('kernel', {
  UNAUTHORIZED: { status: 401, when: 'no token, or one that is unknown, expired, suspended or revoked (the body carries no `code`)' },
  SESSION_REVOKED: { status: 401, when: 'a revoked session token' },
  INSUFFICIENT_SCOPE: { status: 403, fields: ['resourceType', 'resourceId', 'requiredScope'], when: 'a visible resource, without the scope' },
  RESOURCE_NOT_PROJECTED: { status: 403, fields: ['resourceType', 'resourceId', 'requiredScope'], when: 'an organization or agent the credential cannot see, or that does not exist' },
  APPROVAL_REQUIRES_HUMAN: { status: 403, when: 'an action only a person may take, asked by a typed API credential' },
  VALIDATION_FAILED: { status: 400, fields: ['field', 'message'], when: 'a query parameter, path parameter or body breaks a rule' },
  // Shared by the two marketplace families: a skill install names every missing variable (`names`), a template install or deploy the first (`key`).
  ENV_VALUE_REQUIRED: {
    status: 400, fields: ['skillId', 'version', 'names', 'key'],
    when: 'skills: an install, or a move of an install to another version, without a value for an env variable the version marks `required` (framework shape, the message names them); templates: an install or deploy that leaves a `required` variable of the version\'s `envContract` without a value in `envValues` (templates envelope with `key`)',
  },
  PAYLOAD_TOO_LARGE: { status: 413, fields: ['field', 'max'], when: 'a body over its route\'s cap, or too many records' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, when: 'a body in a Content-Type the route does not read, or in a charset other than UTF-8' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, when: 'an idempotency key used again with a different request' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, when: 'an idempotency key whose first request has not finished' },
  VENDOR_REJECTED: { status: 422, fields: ['vendor', 'vendorStatus'], when: 'an external system (a carrier) refused the request; `vendor` names it, `vendorStatus` is its own status' },
  ORG_ARCHIVED: { status: 423, fields: ['orgId'], when: 'a mutation on an archived organization (the one in the path, the agent\'s, or the key\'s own); reads are served' },
  RATE_LIMITED: { status: 429, fields: ['retryAfterSeconds'], when: 'the credential\'s budget of a per-credential bucket is spent' },
  VENDOR_UNAVAILABLE: { status: 503, fields: ['vendor', 'retryAfterSeconds'], when: 'a vendor behind the API (a model provider, for example) did not answer in time or failed; nothing was changed, a retry is safe' },
  UPSTREAM_UNAVAILABLE: {
    status: 503, fields: ['retryAfterSeconds', 'requestId'],
    when: 'the store could not be reached, on any route (`retryAfterSeconds` and `Retry-After` only where a blind retry is safe: reads, and writes carrying an idempotency key; without them a write may have applied); telephony: the media server did not answer a voice session\'s room within 15 seconds, could not be reached, or failed (5xx), with `requestId` (nothing was made, a retry is safe)',
  },
  CORE_DRAINING: { status: 503, fields: ['retryable'], when: 'a request that reached a process after it was told to stop, while its requests in flight finish; body `{error: {code, message, retryable: true}}` with `Retry-After: 1`: the request never started, retry it once' },
});

/** The drain family's error codes (spec 01 part 7), defined once for the registry and docs/api.md. */
import type { AppError } from '../../errors.js';
import { defineErrors } from '../../api/kernel/error-registry.js';

export const DrainErrors = defineErrors('drains', {
  DRAIN_VALIDATION_FAILED: { status: 400, fields: ['field', 'message'], when: 'a drain body breaks a field rule, or holds an unknown field' },
  DRAIN_NOT_SIGNED: { status: 400, when: '`rotate-secret` on a drain type that is not signed' },
  DRAIN_NOT_FOUND: { status: 404, when: 'no such drain in the organization; every drain route when `LOG_DRAINS_ENABLED=false`' },
  DRAIN_NAME_TAKEN: { status: 409, fields: ['field'], when: 'another live drain of the organization has the name' },
  DRAIN_NOT_VERIFIED: { status: 409, when: '`POST .../test` or `POST .../replays` before the drain\'s endpoint has passed verification' },
  DRAIN_REPLAY_NOT_FOUND: { status: 404, when: 'no such replay of the drain' },
  DRAIN_NOT_DELIVERING: { status: 409, fields: ['state'], when: '`POST .../replays` for a drain that is paused (by hand or by its quota): it delivers nothing, a replay neither' },
  DRAIN_REPLAY_IN_PROGRESS: { status: 409, fields: ['replayId'], when: '`POST .../replays` while the drain has a replay queued or running' },
  DRAIN_REPLAY_ENDED: { status: 409, fields: ['status'], when: '`DELETE .../replays/:replayId` of a replay already completed, cancelled or failed' },
  DRAIN_ROTATION_IN_PROGRESS: { status: 409, when: '`rotate-secret` while a rotation window is open' },
  DRAIN_ENDPOINT_INVALID: { status: 422, fields: ['field'], when: 'an endpoint that is not HTTPS or points at a private, loopback, link-local or metadata address' },
  DRAIN_ENDPOINT_NOT_ALLOWED: { status: 422, fields: ['field'], when: 'a `vendor-a` drain given an endpoint; a `vendor-b` host outside `VENDOR_B_HOSTS`' },
  DRAIN_CONTENT_ACK_REQUIRED: { status: 422, fields: ['field'], when: '`includeContent` without `includeContentAck: true`' },
  DRAIN_SCRUB_RULE_INVALID: { status: 422, fields: ['field'], when: 'a scrub rule that does not compile, could backtrack, or is over its cost bound' },
  DRAIN_AGENT_NOT_IN_ORG: { status: 422, fields: ['field'], when: 'selectors naming agents outside the organization' },
  DRAIN_LIMIT_REACHED: { status: 422, when: 'the organization already has its maximum of drains' },
  DRAIN_TYPE_UNAVAILABLE: { status: 422, fields: ['field'], when: 'a type left out of `DRAIN_TYPES_ENABLED`' },
  DRAIN_RATE_LIMITED: { status: 429, fields: ['retryAfterSeconds'], when: 'the organization\'s drain read or mutation budget is spent' },
  DRAIN_REPLAY_RATE_LIMITED: { status: 429, fields: ['retryAfterSeconds'], when: 'the organization\'s replay requests of the hour are spent' },
  DRAIN_VERIFY_RATE_LIMITED: { status: 429, fields: ['retryAfterSeconds'], when: 'more than 5 verification attempts for one drain in an hour' },
});

export const replayNotFound = (): AppError => DrainErrors.DRAIN_REPLAY_NOT_FOUND('Replay not found.');

export const drainNotFound = (): AppError => DrainErrors.DRAIN_NOT_FOUND('Log drain not found.');

export const drainValidation = (field: string, messages: string[]): AppError =>
  DrainErrors.DRAIN_VALIDATION_FAILED(messages.join('; '), { field, message: messages });

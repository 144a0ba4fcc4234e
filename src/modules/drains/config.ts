/**
 * The drain routes' slice of the configuration (`config.drains`): which drain types this deployment
 * offers, the vendor endpoints' rules and the routes' budgets. The settings the delivery engine
 * shares with the routes (the endpoint allow list, the quota, the change notifications) stay at the
 * configuration's top level.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DRAIN_TYPES } from '../../destinations/index.js';
import { int, list, str, type DeepReadonly } from '../../config/env-schema.js';

export const drainsConfigSchema = Type.Object({
  typesEnabled: list('DRAIN_TYPES_ENABLED', 'drain types this deployment offers; the others answer `DRAIN_TYPE_UNAVAILABLE`', { default: DRAIN_TYPES, items: DRAIN_TYPES }),
  vendorAIntakeUrl: str('VENDOR_A_INTAKE_URL', 'https://http-intake.logs.{site}/api/v2/logs', 'URL template of `vendor-a` endpoints (`{site}`: the drain\'s site)', {
    pattern: '\\{site\\}|^https://', formMessage: 'VENDOR_A_INTAKE_URL must be an https URL template',
  }),
  vendorBHosts: list('VENDOR_B_HOSTS', 'hosts (or `.suffixes`) a `vendor-b` endpoint may use', { default: ['.logs.vendor-b.com'], lowercase: true }),
  /** Drain route budgets per organization and minute (spec 01 part 8). */
  rateLimits: Type.Object({
    readPerMinute: int('DRAIN_RATE_LIMIT_READ_PER_MIN', 300, { min: 1 }, 'drain read requests a minute per organization'),
    mutatePerMinute: int('DRAIN_RATE_LIMIT_MUTATE_PER_MIN', 60, { min: 1 }, 'drain changes a minute per organization'),
    replaysPerHour: int('DRAIN_REPLAY_RATE_LIMIT_PER_HOUR', 10, { min: 1 }, 'drain replays an organization may request an hour'),
  }),
});

export type DrainsConfig = DeepReadonly<Static<typeof drainsConfigSchema>>;

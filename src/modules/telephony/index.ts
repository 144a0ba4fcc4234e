/**
 * The telephony route family (spec 02): SIP trunks and phone numbers on the
 * carrier port (src/vendors/carrier/), RCS agents on the RCS port
 * (src/vendors/rcs/), and voices with their versions. Its tables are its own migrations; its
 * seed array is `phoneNumbers` (contract telephony T1).
 */
import type { FastifyInstance } from 'fastify';
import { defineFamily } from '../../api/kernel/family.js';
import type { TelephonyDeps } from './context.js';
import { telephonyMigrations } from './migrations.js';
import { registerTrunkRoutes } from './trunks/routes.js';
import { registerNumberRoutes } from './numbers/routes.js';
import { registerRcsRoutes } from './rcs/routes.js';
import { registerVoiceRoutes } from './voice/routes.js';
import { phoneNumbersSeed } from './numbers/seed.js';
import { countingVendors } from './vendor-errors.js';

export const telephonyFamily = defineFamily<TelephonyDeps>({
  name: 'telephony',
  migrations: telephonyMigrations,
  seed: phoneNumbersSeed,
  register(app: FastifyInstance, given: TelephonyDeps) {
    // Every vendor call of the family counts its failures (vendor-errors.ts).
    const deps: TelephonyDeps = { ...given, vendors: countingVendors(given.vendors, given.metrics) };
    registerTrunkRoutes(app, deps);
    registerNumberRoutes(app, deps);
    registerRcsRoutes(app, deps);
    registerVoiceRoutes(app, deps);
  },
});

export type { TelephonyDeps };

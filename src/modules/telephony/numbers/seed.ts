/**
 * The seed file's `phoneNumbers` array (contract telephony T1):
 * `{orgId, msisdn, transport, country, type, capabilities, status}`, any
 * transport (`byo-sip` included), status `active` or `suspended`; applied
 * idempotently by msisdn. The service assigns `id` and `createdAt`.
 */
import { newId } from '../../../model/ids.js';
import type { SeedSection } from '../../../seed/seed-file.js';
import { countryOf } from './e164.js';
import { numbersRepo } from './repository.js';

interface SeedNumber {
  orgId: string;
  msisdn: string;
  transport: string;
  country: string;
  type: string;
  capabilities: string[];
  status: string;
}

const TRANSPORTS = ['carrier-a', 'carrier-b', 'byo-sip'];
const TYPES = ['mobile-lvn', 'landline', 'landline-toll-free'];
const STATUSES = ['active', 'suspended'];

export const phoneNumbersSeed: SeedSection = {
  key: 'phoneNumbers',
  check(raw, orgIds) {
    if (!Array.isArray(raw)) return ['phoneNumbers must be an array of objects'];
    const problems: string[] = [];
    const seen = new Set<string>();
    raw.forEach((v: unknown, i) => {
      const at = `phoneNumbers[${i}]`;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        problems.push(`${at} must be an object`);
        return;
      }
      const n = v as Record<string, unknown>;
      if (typeof n.orgId !== 'string' || !orgIds.has(n.orgId)) problems.push(`${at}.orgId names no org of this file`);
      if (typeof n.msisdn !== 'string' || !/^[1-9]\d{1,14}$/.test(n.msisdn)) problems.push(`${at}.msisdn must be E.164 digits without the +`);
      else if (seen.has(n.msisdn)) problems.push(`${at}.msisdn is given twice`);
      else seen.add(n.msisdn);
      if (!TRANSPORTS.includes(n.transport as string)) problems.push(`${at}.transport must be one of ${TRANSPORTS.join(', ')}`);
      if (typeof n.country !== 'string' || countryOf(n.country) !== n.country) problems.push(`${at}.country must be an upper-case ISO 3166-1 alpha-2 code`);
      if (!TYPES.includes(n.type as string)) problems.push(`${at}.type must be one of ${TYPES.join(', ')}`);
      if (!Array.isArray(n.capabilities) || !n.capabilities.every((c) => typeof c === 'string')) problems.push(`${at}.capabilities must be an array of strings`);
      if (!STATUSES.includes(n.status as string)) problems.push(`${at}.status must be active or suspended`);
    });
    return problems;
  },
  async apply(tx, items) {
    for (const item of items as SeedNumber[]) {
      await numbersRepo(tx).upsertSeeded(item, `pn_${newId()}`, Date.now());
    }
  },
};

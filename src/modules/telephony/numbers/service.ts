/**
 * Phone numbers (spec 02 parts 2.2, 3, 4.2; contract telephony T4): the
 * carrier's inventory, purchase, and the life of a number an organization
 * owns. Ownership is the database's: a unique index on the msisdn of every
 * number not released, so of two purchases racing, exactly one commits.
 */
import { newId } from '../../../model/ids.js';
import type { UnitOfWork } from '../../../store/unit-of-work.js';
import { CARRIER_TRANSPORTS, type CarrierTransport, type InventoryNumber, type NumberType } from '../../../vendors/carrier/port.js';
import { emailOf, type Actor, type TelephonyDeps } from '../context.js';
import { TelephonyErrors, atCarrier, fieldRule } from '../errors.js';
import { COUNTRY_RULE, MSISDN_RULE, countryOf, msisdnOf } from './e164.js';
import { isNumberTaken, numbersRepo, type NumberFilter, type NumberStatus, type PhoneNumberRow } from './repository.js';
import { auditActorOf } from '../../../api/kernel/auth.js';

export const SEARCH_LIMIT = { default: 10, max: 50 } as const;
export const LIST_LIMIT = { default: 50, max: 200 } as const;
export const FEATURES = ['voice', 'sms', 'mms'] as const;

export interface PhoneNumberView {
  id: string;
  msisdn: string;
  country: string;
  type: string;
  capabilities: string[];
  orgId: string;
  purchasedBy?: string;
  purchasedByEmail?: string;
  status: string;
  createdAt: number;
  transport: string;
  tenDlcCampaignId?: string;
  tfnRegistrationId?: string;
}

export function numberView(n: PhoneNumberRow): PhoneNumberView {
  return {
    id: n.id, msisdn: n.msisdn, country: n.country, type: n.type, capabilities: n.capabilities, orgId: n.orgId,
    ...(n.purchasedBy !== null ? { purchasedBy: n.purchasedBy } : {}),
    ...(n.purchasedByEmail !== null ? { purchasedByEmail: n.purchasedByEmail } : {}),
    status: n.status, createdAt: n.createdAt, transport: n.transport,
    ...(n.tenDlcCampaignId !== null ? { tenDlcCampaignId: n.tenDlcCampaignId } : {}),
    ...(n.tfnRegistrationId !== null ? { tfnRegistrationId: n.tfnRegistrationId } : {}),
  };
}

export interface SearchQuery {
  country?: string | undefined;
  transport?: string | undefined;
  limit?: number | undefined;
  type?: NumberType | undefined;
  features?: string | undefined;
  contains?: string | undefined;
  search_pattern?: number | undefined;
}

const unsupported = (transport: string) => TelephonyErrors.NUMBER_TRANSPORT_UNSUPPORTED(`Unsupported transport: ${transport}`);

function carrierTransport(raw: string | undefined): CarrierTransport {
  const t = raw ?? 'carrier-a';
  if (!(CARRIER_TRANSPORTS as readonly string[]).includes(t)) throw unsupported(t);
  return t as CarrierTransport;
}

/** The msisdn of a path: the digits, a leading `+` ignored; undefined names no number. */
const pathMsisdn = (raw: string): string | undefined => {
  const digits = raw.startsWith('+') ? raw.slice(1) : raw;
  return /^\d{1,15}$/.test(digits) ? digits : undefined;
};

const audit = (tx: UnitOfWork, actor: Actor, action: string, n: PhoneNumberRow, details: Record<string, unknown> = {}) =>
  tx.audit({ orgId: actor.orgId, action: `telephony.number.${action}`, actor: auditActorOf(actor.principal), targetType: 'phone_number', targetId: n.id, details: { msisdn: n.msisdn, ...details } });

/**
 * The read-cache topic of which numbers are owned (by any organization): every unit of work below
 * that writes a number says so (`tx.changed`). The seed's numbers are written before a process
 * serves, or by another process, whose write a cached entry outlives by at most its age bound: a
 * number shown as available meanwhile is refused at purchase as owned.
 */
export const NUMBERS_TOPIC = 'telephony.numbers';

export function createNumberService(deps: TelephonyDeps) {
  const { store } = deps;
  const { carrier } = deps.vendors;
  const repo = numbersRepo(store.sql);
  // Which of a search's candidates are owned, by the candidates (a repeated search asks the same).
  const owned = deps.reads.cache<Set<string>>(NUMBERS_TOPIC);

  /**
   * Runs `fn` on the organization's number (locked; released ones are not found) and answers it as
   * it is after. `notFound`: the route's 404 message.
   */
  async function mutate(actor: Actor, raw: string, notFound: string, fn: (tx: UnitOfWork, n: PhoneNumberRow) => Promise<PhoneNumberRow>): Promise<PhoneNumberRow> {
    const msisdn = pathMsisdn(raw);
    if (msisdn === undefined) throw TelephonyErrors.NUMBER_NOT_FOUND(notFound);
    return store.unitOfWork(async (tx) => {
      const n = await numbersRepo(tx.sql).get(actor.orgId, msisdn, true);
      if (!n) throw TelephonyErrors.NUMBER_NOT_FOUND(notFound);
      tx.changed(NUMBERS_TOPIC);
      return fn(tx, n);
    });
  }

  /** Moves a number from `from` to `to` (suspend, reactivate), with its audit entry; any other status is not found. */
  async function move(actor: Actor, raw: string, from: NumberStatus, to: NumberStatus, action: string, notFound: string): Promise<PhoneNumberView> {
    return numberView(await mutate(actor, raw, notFound, async (tx, n) => {
      if (n.status !== from) throw TelephonyErrors.NUMBER_NOT_FOUND(notFound);
      await numbersRepo(tx.sql).setStatus(n.id, to, Date.now());
      await audit(tx, actor, action, n);
      return { ...n, status: to };
    }));
  }

  return {
    /** Inventory numbers owned by no organization, ascending, at most min(limit, 50). */
    async search(q: SearchQuery): Promise<InventoryNumber[]> {
      if (q.country === undefined || q.country.trim() === '') throw TelephonyErrors.NUMBER_COUNTRY_REQUIRED('Country is required');
      const country = countryOf(q.country.trim());
      if (country === undefined) throw fieldRule('country', COUNTRY_RULE);
      const transport = carrierTransport(q.transport);
      const limit = Math.min(q.limit ?? SEARCH_LIMIT.default, SEARCH_LIMIT.max);
      let features: string[] | undefined;
      if (q.features !== undefined) {
        features = q.features.split(',').map((f) => f.trim().toLowerCase()).filter((f) => f.length > 0);
        if (features.some((f) => !(FEATURES as readonly string[]).includes(f))) throw fieldRule('features', `features must be a comma-separated list of ${FEATURES.join(', ')}`);
      }
      const filters = transport === 'carrier-b'
        ? {
            type: q.type,
            features,
            contains: q.contains !== undefined && q.contains !== '' ? { digits: q.contains, pattern: (q.search_pattern ?? 1) as 0 | 1 | 2 } : undefined,
          }
        : {};
      const found: InventoryNumber[] = [];
      let after: string | undefined;
      // Candidates in pages; the owned ones are left out until `limit` are found or the stock ends.
      for (;;) {
        const want = limit * 2 + 10;
        const candidates = await atCarrier(() => carrier.searchInventory({ transport, country, ...filters, after, limit: want }));
        const msisdns = candidates.map((c) => c.msisdn);
        const taken = await owned.get(msisdns.join(','), () => repo.owned(msisdns));
        for (const c of candidates) {
          if (!taken.has(c.msisdn) && found.length < limit) found.push(c);
        }
        if (found.length >= limit || candidates.length < want) return found;
        after = candidates.at(-1)!.msisdn;
      }
    },

    async purchase(actor: Actor, body: { msisdn?: string | undefined; transport?: string | undefined; country?: string | undefined }): Promise<PhoneNumberView> {
      if (body.msisdn === undefined || body.msisdn.trim() === '') throw fieldRule('msisdn', 'msisdn should not be empty');
      const msisdn = msisdnOf(body.msisdn.trim());
      if (msisdn === undefined) throw fieldRule('msisdn', MSISDN_RULE);
      const transport = carrierTransport(body.transport);
      let country: string | undefined;
      if (body.country !== undefined && body.country !== '') {
        country = countryOf(body.country);
        if (country === undefined) throw fieldRule('country', COUNTRY_RULE);
      }
      if (transport === 'carrier-b' && country === undefined) throw TelephonyErrors.NUMBER_COUNTRY_REQUIRED('country is required for carrier-b purchases');
      const offered = await atCarrier(() => carrier.quoteNumber(transport, msisdn, country));
      const row: PhoneNumberRow = {
        id: `pn_${newId()}`, orgId: actor.orgId, msisdn, country: offered.country, type: offered.type, capabilities: offered.features,
        purchasedBy: actor.principal.userId, purchasedByEmail: (await emailOf(store, actor.principal.userId)) ?? null,
        status: 'active', transport, tenDlcCampaignId: null, tfnRegistrationId: null, createdAt: Date.now(),
      };
      await store.unitOfWork(async (tx) => {
        try {
          await numbersRepo(tx.sql).insert(row);
        } catch (e) {
          if (isNumberTaken(e)) throw TelephonyErrors.NUMBER_ALREADY_OWNED('This number is already owned');
          throw e;
        }
        // Bought at the carrier only once the number is this organization's; a refusal undoes the row.
        await atCarrier(() => carrier.purchaseNumber(transport, msisdn, country));
        await audit(tx, actor, 'purchased', row, { transport });
        tx.changed(NUMBERS_TOPIC);
      });
      return numberView(row);
    },

    async list(orgId: string, f: NumberFilter, limit: number, offset: number): Promise<{ numbers: PhoneNumberView[]; count: number }> {
      const page = await repo.page(orgId, f, limit, offset);
      return { numbers: page.numbers.map(numberView), count: page.total };
    },

    async get(orgId: string, raw: string): Promise<PhoneNumberView> {
      const msisdn = pathMsisdn(raw);
      const n = msisdn === undefined ? undefined : await repo.get(orgId, msisdn);
      if (!n) throw TelephonyErrors.NUMBER_NOT_FOUND('Phone number not found');
      return numberView(n);
    },

    /** Returns the number to its carrier; irreversible. */
    async release(actor: Actor, raw: string): Promise<void> {
      const notFound = 'Phone number not found or already released';
      await mutate(actor, raw, notFound, async (tx, n) => {
        if (n.transport === 'byo-sip') throw TelephonyErrors.NUMBER_BYO_RELEASE('Cannot release number with transport: byo-sip');
        if (n.status !== 'active') throw TelephonyErrors.NUMBER_NOT_FOUND(notFound);
        await atCarrier(() => carrier.releaseNumber(n.transport as CarrierTransport, n.msisdn));
        await numbersRepo(tx.sql).setStatus(n.id, 'released', Date.now());
        await audit(tx, actor, 'released', n);
        return { ...n, status: 'released' };
      });
    },

    async suspend(actor: Actor, raw: string): Promise<PhoneNumberView> {
      return move(actor, raw, 'active', 'suspended', 'suspended', 'Phone number not found or not active');
    },

    async reactivate(actor: Actor, raw: string): Promise<PhoneNumberView> {
      return move(actor, raw, 'suspended', 'active', 'reactivated', 'Phone number not found or not suspended');
    },

    /** Re-applies the carrier's voice configuration; a carrier-a number fails at the carrier (422). */
    async configureVoice(actor: Actor, raw: string): Promise<void> {
      const notFound = 'Phone number not found or not active';
      await mutate(actor, raw, notFound, async (tx, n) => {
        if (n.status !== 'active') throw TelephonyErrors.NUMBER_NOT_FOUND(notFound);
        if (!n.capabilities.includes('voice')) throw TelephonyErrors.NUMBER_NO_VOICE('Phone number does not have voice capability');
        if (n.transport === 'byo-sip') throw unsupported(n.transport);
        await atCarrier(() => carrier.configureVoice(n.transport as CarrierTransport, n.msisdn));
        await audit(tx, actor, 'voice_configured', n);
        return n;
      });
    },
  };
}

/**
 * The in-process sandbox carrier, the embedded default: deterministic
 * inventories of `carrier-a` and `carrier-b` (contract telephony T4) and
 * trunks whose ACL entries are checked as a carrier would (cidr.ts, and
 * acl-policy.ts for what real carriers refuse; an entry given twice on
 * create, in any spelling of its network, is kept once), with
 * no network and no state of its own beyond what the family stores.
 *
 *   carrier-a  15550100000-15550100999  US  mobile-lvn          voice, sms
 *   carrier-b  15550200000-15550200499  US  landline            voice, sms
 *   carrier-b  15550200500-15550200599  US  landline-toll-free  voice
 *   carrier-b  15550200900-15550200999  US  mobile-lvn          sms (SMS only)
 *
 * `carrier-a` exposes no voice configuration: configure-voice fails at it.
 */
import { parseCidr } from './cidr.js';
import { aclRefusal } from './acl-policy.js';
import { CarrierRejection, type Carrier, type CarrierTransport, type InventoryNumber, type InventoryQuery, type NumberType } from './port.js';

interface Block {
  transport: CarrierTransport;
  first: number;
  last: number;
  country: string;
  type: NumberType;
  features: readonly string[];
}

const BLOCKS: readonly Block[] = [
  { transport: 'carrier-a', first: 15550100000, last: 15550100999, country: 'US', type: 'mobile-lvn', features: ['voice', 'sms'] },
  { transport: 'carrier-b', first: 15550200000, last: 15550200499, country: 'US', type: 'landline', features: ['voice', 'sms'] },
  { transport: 'carrier-b', first: 15550200500, last: 15550200599, country: 'US', type: 'landline-toll-free', features: ['voice'] },
  { transport: 'carrier-b', first: 15550200900, last: 15550200999, country: 'US', type: 'mobile-lvn', features: ['sms'] },
];

/** The sandbox's SIP host: trunks answer at `<domain>.sip-<region>.sip.carrier-a.test`. */
export const SANDBOX_SIP_HOST = 'sip.carrier-a.test';

const entry = (b: Block, msisdn: string): InventoryNumber => ({ msisdn, country: b.country, type: b.type, features: [...b.features], transport: b.transport });

function lookUp(transport: CarrierTransport, msisdn: string): InventoryNumber | undefined {
  if (!/^\d{11}$/.test(msisdn)) return undefined;
  const n = Number(msisdn);
  const b = BLOCKS.find((x) => x.transport === transport && n >= x.first && n <= x.last);
  return b ? entry(b, msisdn) : undefined;
}

function matches(n: InventoryNumber, q: InventoryQuery): boolean {
  if (q.transport !== 'carrier-b') return true;
  if (q.type !== undefined && n.type !== q.type) return false;
  if (q.features && !q.features.every((f) => n.features.includes(f))) return false;
  if (q.contains) {
    const { digits, pattern } = q.contains;
    if (pattern === 0 && !n.msisdn.startsWith(digits)) return false;
    if (pattern === 1 && !n.msisdn.includes(digits)) return false;
    if (pattern === 2 && !n.msisdn.endsWith(digits)) return false;
  }
  return true;
}

/**
 * A carrier's check of an ACL entry: its canonical CIDR, or a rejection of a malformed one, a zone
 * id, or an entry real carriers refuse (acl-policy.ts).
 */
function checkedCidr(vendor: string, raw: string): string {
  const parsed = parseCidr(raw);
  const quoted = JSON.stringify(raw.slice(0, 64));
  if (!parsed.ok) {
    throw new CarrierRejection(vendor, 400, parsed.reason === 'zone-id' ? `Invalid CIDR: ${quoted}: zone ids are not accepted` : `Invalid CIDR: ${quoted}`);
  }
  const refusal = aclRefusal(parsed.cidr);
  if (refusal !== undefined) throw new CarrierRejection(vendor, 400, refusal);
  return parsed.cidr.text;
}

export function createSandboxCarrier(): Carrier {
  const trunkVendor = 'carrier-a';
  return {
    name: 'sandbox',
    sipHost: SANDBOX_SIP_HOST,
    async searchInventory(q) {
      const found: InventoryNumber[] = [];
      if (q.country !== 'US') return found;
      const after = q.after === undefined ? -1 : Number(q.after);
      for (const b of BLOCKS) {
        if (b.transport !== q.transport) continue;
        for (let n = Math.max(b.first, after + 1); n <= b.last && found.length < q.limit; n++) {
          const e = entry(b, String(n));
          if (matches(e, q)) found.push(e);
        }
      }
      return found;
    },
    async quoteNumber(transport, msisdn, country) {
      return this.purchaseNumber(transport, msisdn, country);
    },
    async purchaseNumber(transport, msisdn, country) {
      const e = lookUp(transport, msisdn);
      if (!e) throw new CarrierRejection(transport, 404, `Number ${msisdn} is not in ${transport} inventory`);
      if (transport === 'carrier-b' && country !== e.country) throw new CarrierRejection(transport, 400, `Number ${msisdn} is not offered in country ${country ?? ''}`);
      return e;
    },
    async releaseNumber(transport, msisdn) {
      if (!lookUp(transport, msisdn)) throw new CarrierRejection(transport, 404, `Number ${msisdn} is not a ${transport} number`);
    },
    async configureVoice(transport, msisdn) {
      if (transport === 'carrier-a') throw new CarrierRejection('carrier-a', 501, 'carrier-a numbers take their voice configuration at the carrier; it cannot be re-applied through this API');
      const e = lookUp(transport, msisdn);
      if (!e) throw new CarrierRejection(transport, 404, `Number ${msisdn} is not a ${transport} number`);
      if (!e.features.includes('voice')) throw new CarrierRejection(transport, 400, `Number ${msisdn} has no voice capability`);
    },
    async createTrunk(_domain, _region, acl) {
      return { acl: [...new Set(acl.map((c) => checkedCidr(trunkVendor, c)))] };
    },
    async deleteTrunk() {},
    async addAclEntry(_domain, cidr) {
      return checkedCidr(trunkVendor, cidr);
    },
    async removeAclEntry() {},
  };
}

/**
 * The carrier port: what the telephony family asks of a carrier (SIP
 * trunking and phone-number inventory). The family takes a `Carrier` in its
 * dependencies and never an adapter; the adapter is chosen once, from
 * configuration (src/vendors/carrier/select.ts).
 *
 * A carrier refusal is a `CarrierRejection`: the family answers it as
 * `422 VENDOR_REJECTED` naming the carrier and its status.
 */

/** The carriers numbers are bought from; `byo-sip` numbers have none. */
export type CarrierTransport = 'carrier-a' | 'carrier-b';
export const CARRIER_TRANSPORTS: readonly CarrierTransport[] = ['carrier-a', 'carrier-b'];

export type NumberType = 'mobile-lvn' | 'landline' | 'landline-toll-free';
export const NUMBER_TYPES: readonly NumberType[] = ['mobile-lvn', 'landline', 'landline-toll-free'];

/** A number the carrier offers. */
export interface InventoryNumber {
  msisdn: string;
  country: string;
  type: NumberType;
  features: string[];
  /** The carrier's price, when it reports one. */
  cost?: string;
  transport: CarrierTransport;
}

export interface InventoryQuery {
  transport: CarrierTransport;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  /** carrier-b only. */
  type?: NumberType | undefined;
  /** carrier-b only: every one of these present. */
  features?: readonly string[] | undefined;
  /** carrier-b only: digits the msisdn starts with (0), contains (1) or ends with (2). */
  contains?: { digits: string; pattern: 0 | 1 | 2 } | undefined;
  /** Only numbers above this msisdn (the next page of candidates). */
  after?: string | undefined;
  limit: number;
}

export class CarrierRejection extends Error {
  constructor(
    readonly vendor: string,
    /** The carrier's own status or error code. */
    readonly vendorStatus: number | string,
    message: string,
  ) {
    super(message);
  }
}

export interface Carrier {
  /** The adapter's name, for logs and the docs (`sandbox`). */
  readonly name: string;
  /** The host trunks answer under: `sip:*@<domain>.sip-<region>.<sipHost>`. */
  readonly sipHost: string;
  /** Candidates in ascending msisdn order, ownership not considered (the family filters owned numbers). */
  searchInventory(q: InventoryQuery): Promise<InventoryNumber[]>;
  /** What the carrier offers as `msisdn` (a refusal when it offers no such number); buys nothing. `country` is required by carrier-b. */
  quoteNumber(transport: CarrierTransport, msisdn: string, country: string | undefined): Promise<InventoryNumber>;
  /** Buys `msisdn`; answers what the carrier knows of it. `country` is required by carrier-b. */
  purchaseNumber(transport: CarrierTransport, msisdn: string, country: string | undefined): Promise<InventoryNumber>;
  /** Returns `msisdn` to the carrier. */
  releaseNumber(transport: CarrierTransport, msisdn: string): Promise<void>;
  /** Re-applies the carrier's voice configuration to `msisdn`. */
  configureVoice(transport: CarrierTransport, msisdn: string): Promise<void>;
  /**
   * Provisions the trunk `domain` in `region`; `acl` entries are checked by the carrier (a malformed
   * one is a rejection). Answers the entries as the carrier keeps them (canonical CIDRs).
   */
  createTrunk(domain: string, region: string, acl: readonly string[]): Promise<{ acl: string[] }>;
  deleteTrunk(domain: string): Promise<void>;
  /** Checks and normalizes one ACL entry (a CIDR) for the trunk. */
  addAclEntry(domain: string, cidr: string): Promise<string>;
  removeAclEntry(domain: string, cidr: string): Promise<void>;
}

/**
 * The RCS port: what the telephony family asks of a carrier's RCS business
 * messaging platform (device reachability of a sender's recipients). The
 * sender record itself is the family's; the port is asked only what the
 * carrier alone knows. The adapter is chosen in src/vendors/index.ts.
 */

/** One device's RCS reachability for a sender. `features` only when reachable (non-empty). */
export interface RcsCapability {
  phoneNumber: string;
  isReachable: boolean;
  features?: string[];
}

/**
 * A bulk reachability answer: the list's reachable numbers (in list order) and the carrier's random
 * sample of the list, its size and how many of it are reachable. The family derives the percentage.
 */
export interface RcsBulkCapability {
  reachableUsers: string[];
  totalRandomSampleUserCount: number;
  reachableRandomSampleUserCount: number;
}

export interface RcsPort {
  /** The adapter's name, for logs and the docs (`sandbox`). */
  readonly name: string;
  /** Whether the device at `phoneNumber` (E.164 with `+`) can receive RCS from `senderId`. */
  checkCapability(senderId: string, phoneNumber: string): Promise<RcsCapability>;
  /** Reachability of every number of `phoneNumbers` (E.164 with `+`, distinct) from `senderId`. */
  bulkCapability(senderId: string, phoneNumbers: readonly string[]): Promise<RcsBulkCapability>;
}

/**
 * The telephony family's error codes. Its routes answer in spec 02 part 7's
 * shape `{statusCode, error, message}` (kernel/error-shapes.ts), so the code
 * names the case for the registry and docs/api.md; the message is the
 * spec's, word for word.
 */
import type { AppError } from '../../errors.js';
import { defineErrors } from '../../api/kernel/error-registry.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { CarrierRejection } from '../../vendors/carrier/port.js';

export const TelephonyErrors = defineErrors('telephony', {
  TRUNK_AUTH_REQUIRED: { status: 400, when: 'a SIP trunk created with neither an ACL entry nor digest authentication (the `failed` trunk remains until deleted)' },
  TRUNK_ACL_FULL: { status: 400, when: 'a trunk ACL already holds 16 entries' },
  TRUNK_ACL_DUPLICATE: { status: 400, when: 'an ACL entry the trunk already has' },
  TRUNK_ACL_LAST_ENTRY: { status: 400, when: 'removing the only ACL entry of a trunk' },
  TRUNK_DIGEST_DISABLED: { status: 400, when: 'a digest user created on a trunk without digest authentication' },
  TRUNK_DIGEST_USERS_FULL: { status: 400, when: 'a trunk already has 200 digest users' },
  TRUNK_USERNAME_TAKEN: { status: 400, when: 'a digest username the trunk already has' },
  TRUNK_NO_AGENT_LINKED: { status: 400, when: 'unlinking the agent of a trunk that has none' },
  TRUNK_AGENT_NOT_IN_ORG: { status: 403, when: 'linking a trunk to an agent of another (or no) organization; answered before the trunk is looked up' },
  TRUNK_NOT_FOUND: { status: 404, when: 'no such SIP trunk in the organization, or a deleted one' },
  TRUNK_ACL_ENTRY_NOT_FOUND: { status: 404, when: 'removing an ACL entry the trunk does not have' },
  TRUNK_DIGEST_USER_NOT_FOUND: { status: 404, when: 'deleting or rotating a digest user the trunk does not have' },
  NUMBER_COUNTRY_REQUIRED: { status: 400, when: 'an inventory search without `country`, or a `carrier-b` purchase without it' },
  NUMBER_TRANSPORT_UNSUPPORTED: { status: 400, when: 'a search or purchase with a transport other than `carrier-a` or `carrier-b`; configure-voice of a `byo-sip` number' },
  NUMBER_ALREADY_OWNED: { status: 400, when: 'a purchase of a number some organization owns (active or suspended)' },
  NUMBER_BYO_RELEASE: { status: 400, when: 'a release of a `byo-sip` number' },
  NUMBER_NO_VOICE: { status: 400, when: 'configure-voice on an SMS-only number' },
  NUMBER_NOT_FOUND: { status: 404, when: 'a number the organization does not own, or not in the status the route needs' },
});

export const trunkNotFound = (): AppError => TelephonyErrors.TRUNK_NOT_FOUND('SIP trunk not found');

/** A field rule that failed, answered as field validation (`message` is the array of failed rules). */
export const fieldRule = (field: string, rule: string): AppError => KernelErrors.VALIDATION_FAILED(rule, { field, message: [rule] });

/** A carrier's refusal as spec 01 part 7.2's `422 VENDOR_REJECTED`; anything else unchanged. */
export function fromCarrier(e: unknown): unknown {
  if (e instanceof CarrierRejection) return KernelErrors.VENDOR_REJECTED(e.message, { vendor: e.vendor, vendorStatus: e.vendorStatus });
  return e;
}

/** Runs a carrier call, turning its refusal into the API's answer. */
export async function atCarrier<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw fromCarrier(e);
  }
}

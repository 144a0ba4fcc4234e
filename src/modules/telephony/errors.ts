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
  TRUNK_AGENT_NOT_IN_ORG: { status: 403, when: 'linking a trunk or an RCS agent to a platform agent of another (or no) organization; for a trunk answered before the trunk is looked up' },
  TRUNK_NOT_FOUND: { status: 404, when: 'no such SIP trunk in the organization, or a deleted one' },
  TRUNK_ACL_ENTRY_NOT_FOUND: { status: 404, when: 'removing an ACL entry the trunk does not have' },
  TRUNK_DIGEST_USER_NOT_FOUND: { status: 404, when: 'deleting or rotating a digest user the trunk does not have' },
  NUMBER_COUNTRY_REQUIRED: { status: 400, when: 'an inventory search without `country`, or a `carrier-b` purchase without it' },
  NUMBER_TRANSPORT_UNSUPPORTED: { status: 400, when: 'a search or purchase with a transport other than `carrier-a` or `carrier-b`; configure-voice of a `byo-sip` number' },
  NUMBER_ALREADY_OWNED: { status: 400, when: 'a purchase of a number some organization owns (active or suspended)' },
  NUMBER_BYO_RELEASE: { status: 400, when: 'a release of a `byo-sip` number' },
  NUMBER_NO_VOICE: { status: 400, when: 'configure-voice on an SMS-only number' },
  NUMBER_NOT_FOUND: { status: 404, when: 'a number the organization does not own, or not in the status the route needs; provision-from-config binding a number that is not an active one of the agent\'s organization' },
  RCS_SENDER_TAKEN: { status: 400, when: 'an RCS agent registered with a sender id some organization has registered already' },
  RCS_AGENT_NOT_TESTING_OR_LIVE: { status: 400, when: 'a capability check on an RCS agent neither `testing` nor `live`' },
  RCS_AGENT_NOT_LIVE: { status: 400, when: 'a bulk capability check on an RCS agent that is not `live` (checked before the list)' },
  RCS_AGENT_NOT_FOUND: { status: 404, when: 'no such RCS agent in the organization; a suspended one on PATCH, link and capability checks' },
  VOICE_NAME_TAKEN: { status: 400, when: 'a voice name another active voice of the agent has (create, rename, enabling or publishing a deactivated voice)' },
  VOICE_VERSION_EXISTS: { status: 400, when: 'a version string the voice has already' },
  VOICE_CONFIG_INVALID: { status: 400, when: 'a provision-from-config body that breaks a field or pairing rule' },
  VOICE_AGENT_NOT_FOUND: { status: 404, when: '`Agent not found`: a voice route asked by a session or legacy key for an agent that does not exist or it cannot see (scoped keys get `RESOURCE_NOT_PROJECTED`)' },
  VOICE_NOT_FOUND: { status: 404, when: '`Voice agent not found`: no such voice on the agent in the path' },
  VOICE_VERSION_NOT_FOUND: { status: 404, when: 'publishing a version the voice does not have' },
  VOICE_NONE_ACTIVE: { status: 400, when: 'a dispatch naming no voice for an agent without an active voice' },
  VOICE_NOT_USABLE: { status: 403, when: 'a dispatch naming a voice that is deactivated, missing, or another agent\'s' },
  VOICE_SESSION_CHANNEL: { status: 400, when: 'a voice session asked for a channel other than `web`' },
  MEDIA_UPSTREAM_REJECTED: { status: 400, when: 'the media server (LiveKit) refused the session\'s room: its 4xx status is passed through (400 stands for any of them), its `msg` as `message`' },
  CALLER_ID_NOT_AUTHORIZED: { status: 403, when: 'a dispatch whose `callerId` is no active number of the agent\'s organization' },
});

export const trunkNotFound = (): AppError => TelephonyErrors.TRUNK_NOT_FOUND('SIP trunk not found');
export const rcsAgentNotFound = (): AppError => TelephonyErrors.RCS_AGENT_NOT_FOUND('RCS agent not found');
export const agentNotFound = (): AppError => TelephonyErrors.VOICE_AGENT_NOT_FOUND('Agent not found');
export const voiceNotFound = (): AppError => TelephonyErrors.VOICE_NOT_FOUND('Voice agent not found');

/** Several failed field rules at once, answered as field validation. */
export const fieldRules = (field: string, rules: readonly string[]): AppError =>
  KernelErrors.VALIDATION_FAILED(rules.join('; '), { field, message: [...rules] });

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

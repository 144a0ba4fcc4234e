/**
 * The in-process sandbox RCS platform, the embedded default (contract
 * telephony T5): deterministic, no network, no state.
 *
 *   reachable      a number whose last digit is even; its features then the sandbox's list
 *   random sample  the list's numbers whose second-to-last digit is 0
 */
import type { RcsBulkCapability, RcsCapability, RcsPort } from './port.js';

export const SANDBOX_RCS_FEATURES: readonly string[] = ['RICHCARD_STANDALONE', 'RICHCARD_CAROUSEL', 'ACTION_DIAL', 'ACTION_OPEN_URL', 'ACTION_SHARE_LOCATION'];

const reachable = (phoneNumber: string): boolean => Number(phoneNumber.at(-1)) % 2 === 0;
const sampled = (phoneNumber: string): boolean => phoneNumber.at(-2) === '0';

export function createSandboxRcs(): RcsPort {
  return {
    name: 'sandbox',
    async checkCapability(_senderId: string, phoneNumber: string): Promise<RcsCapability> {
      return reachable(phoneNumber) ? { phoneNumber, isReachable: true, features: [...SANDBOX_RCS_FEATURES] } : { phoneNumber, isReachable: false };
    },
    async bulkCapability(_senderId: string, phoneNumbers: readonly string[]): Promise<RcsBulkCapability> {
      const sample = phoneNumbers.filter(sampled);
      return {
        reachableUsers: phoneNumbers.filter(reachable),
        totalRandomSampleUserCount: sample.length,
        reachableRandomSampleUserCount: sample.filter(reachable).length,
      };
    },
  };
}

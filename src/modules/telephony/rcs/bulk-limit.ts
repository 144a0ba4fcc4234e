/**
 * The bulk capability check's budget per organization: each check may parse
 * 10,000 numbers (up to a second of CPU), so an organization gets
 * RCS_BULK_CHECKS_PER_MIN (default 10) a minute, a fixed window counted by the
 * kernel's limiter across every API process of the store
 * (src/api/kernel/rate-limit.ts). Counted right after the access check,
 * before the body is read: a refused request costs no parsing. Spec 02 part 8
 * sets no limit here; the 429 has the dispatch limit's form (contract
 * telephony T3.4): code RATE_LIMITED, retryAfterSeconds, a bare Retry-After.
 */
import { KernelErrors } from '../../../api/kernel/error-registry.js';
import type { Bucket } from '../../../api/kernel/rate-limit.js';

export const RCS_BULK_BUCKET_NAME = 'rcs-bulk-capability-check';

export const rcsBulkBucket = (perMinute: number): Bucket => ({
  name: RCS_BULK_BUCKET_NAME,
  limit: perMinute,
  windowMs: 60_000,
  error: KernelErrors.RATE_LIMITED,
  message: (orgId) => `RCS bulk capability check rate limit exceeded for organization ${orgId} (${perMinute}/min)`,
});

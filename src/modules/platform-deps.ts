/**
 * What the API hands every family: each takes the part it needs (its own
 * `Deps` type is a subset of this). Built once by src/api/server.ts.
 */
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import type { RateLimiter } from '../api/kernel/rate-limit.js';
import type { RecordSink } from './ingest/records.js';
import type { Vendors } from '../vendors/index.js';

export interface PlatformDeps {
  config: Config;
  store: Store;
  logger: Logger;
  limiter: RateLimiter;
  /** Where accepted records go: the embedded queue or the Kafka topic. */
  sink: RecordSink;
  /** The vendors' ports (src/vendors/), their adapters chosen from configuration. */
  vendors: Vendors;
}

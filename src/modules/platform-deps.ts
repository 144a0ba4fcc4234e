/**
 * What the API hands every family: each takes the part it needs (its own
 * `Deps` type is a subset of this). Built once by src/api/server.ts.
 */
import type { Config } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import type { RateLimiter } from '../api/kernel/rate-limit.js';
import type { Transport } from '../deliver/transport.js';
import type { Deliverer } from '../deliver/deliverer.js';
import type { RecordSink } from './ingest/records.js';
import type { ModelProvider } from '../vendors/model-provider/port.js';

export interface PlatformDeps {
  config: Config;
  store: Store;
  logger: Logger;
  limiter: RateLimiter;
  /** Where accepted records go: the embedded queue or the Kafka topic. */
  sink: RecordSink;
  transport: Transport;
  deliverer: Deliverer;
  /** The model provider (MODEL_PROVIDER_*, else the in-process sandbox). */
  modelProvider: ModelProvider;
}

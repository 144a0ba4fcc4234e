/** The ingest route family: POST /internal/records, the embedded queue's entrance (routes.ts). */
import { defineFamily } from '../../api/kernel/family.js';
import { registerRecordRoutes, type IngestDeps } from './routes.js';

export const ingestFamily = defineFamily<IngestDeps>({ name: 'ingest', register: registerRecordRoutes });

export { MAX_INGEST_BODY_BYTES, MAX_INGEST_RECORDS, type IngestDeps } from './routes.js';

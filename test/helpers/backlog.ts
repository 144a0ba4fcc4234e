import type { ParkedRecord } from '../../src/modules/drains/tables/backlog.js';
import { bucketOf } from '../../src/modules/drains/tables/backlog-pages.js';

/** Records to park with their resources' buckets, as the pipeline gives them (it keeps one a resource). */
export const withBuckets = (rows: readonly Omit<ParkedRecord, 'bucket'>[]): ParkedRecord[] =>
  rows.map((r) => ({ ...r, bucket: bucketOf(r.resourceJson) }));

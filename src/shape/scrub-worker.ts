/**
 * A scrub worker thread (scrub-pool.ts): scrubs the body and string
 * attributes of records too heavy for the routing thread, with the drain's
 * compiled rules (compiled once per rule set, the few most recent kept).
 */
import { parentPort } from 'node:worker_threads';
import { compileScrubber, type Scrubber } from './scrubber.js';
import type { ScrubJob, ScrubDone } from './scrub-pool.js';

const KEPT_RULE_SETS = 32;
const compiled = new Map<string, Scrubber>();

parentPort!.on('message', (job: ScrubJob) => {
  let scrubber = compiled.get(job.rulesKey);
  if (!scrubber) {
    if (compiled.size >= KEPT_RULE_SETS) compiled.delete(compiled.keys().next().value!);
    compiled.set(job.rulesKey, (scrubber = compileScrubber(job.rules)));
  }
  const record = { body: job.body, attributes: job.attributes } as Parameters<Scrubber['scrubRecord']>[0];
  const hits = scrubber.scrubRecord(record);
  const done: ScrubDone = { id: job.id, body: record.body, attributes: record.attributes, hits };
  parentPort!.postMessage(done);
});

// Loaded: the pool's time budget starts with the first job, not with this start.
parentPort!.postMessage('ready');

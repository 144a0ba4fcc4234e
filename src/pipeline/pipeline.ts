/**
 * The record path from a source chunk to the batcher: decode and validate
 * (invalid messages become counted dead letters), route to the drains of the
 * record's organization, select, shape, and add to that drain's open batch.
 * Routing is synchronous; everything slower happens after the batcher.
 */
import { decodeRecord } from '../source/record.js';
import type { SourceChunk } from '../source/source.js';
import { shapeRecord } from '../shape/delivered-record.js';
import type { Batcher } from '../batch/batcher.js';
import type { Accountant } from '../account/accountant.js';
import type { DrainRegistry } from './drain-plans.js';
import type { PipelineEvents } from '../telemetry/events.js';

export interface PipelineOptions {
  sourceName: string;
  registry: DrainRegistry;
  batcher: Batcher;
  accountant: Accountant;
  events: PipelineEvents;
}

export function createPipeline(opts: PipelineOptions): (chunk: SourceChunk) => void {
  return ({ messages, ticket }) => {
    const observed = new Date().toISOString();
    opts.events.consumed(opts.sourceName, messages.length);
    const letters: { source: string; reason: string; payload: string }[] = [];
    for (const raw of messages) {
      if (raw === null) {
        letters.push({ source: opts.sourceName, reason: 'empty message', payload: '' });
        continue;
      }
      const decoded = decodeRecord(raw);
      if (!decoded.ok) {
        letters.push({ source: opts.sourceName, reason: decoded.reason, payload: raw.toString() });
        continue;
      }
      const record = decoded.record;
      for (const plan of opts.registry.plansFor(record.orgId)) {
        // Drains not delivering (pending verification, paused) receive nothing yet; see README, Known gaps.
        if (!plan.deliverable || !plan.select(record)) continue;
        opts.events.selected(plan.drain.type, 1);
        ticket.hold();
        opts.batcher.add(plan, record, shapeRecord(record, observed, plan.shape), ticket);
      }
    }
    if (letters.length > 0) {
      for (const l of letters) opts.events.deadLettered(deadLetterClass(l.reason));
      ticket.hold();
      void opts.accountant.record({ deadLetters: letters }).then(() => ticket.release());
    }
  };
}

/** A bounded label for a dead letter's reason (the reason itself may quote field names). */
export function deadLetterClass(reason: string): 'not_json' | 'too_large' | 'empty' | 'invalid' {
  if (reason === 'not valid JSON') return 'not_json';
  if (reason.startsWith('record of')) return 'too_large';
  if (reason === 'empty message') return 'empty';
  return 'invalid';
}

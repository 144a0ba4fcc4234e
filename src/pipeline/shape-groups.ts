/**
 * Groups an organization's drain plans by shape key, so the pipeline shapes,
 * scrubs and serialises a record once per group rather than once per drain:
 * ten drains with the same content rule, redaction and scrub rules share one
 * delivered record and its JSON. Each plan gets the index of its group, and
 * each group says whether its drains read only the record's JSON (then the
 * pipeline keeps the JSON alone: SerialisedEntry). The
 * registry hands out the same plan list until its next refresh, so the
 * grouping is computed once per list.
 */
import type { DrainPlan } from '../plan/drain-plans.js';

export interface ShapeGroups {
  /** Group index of each plan, in the list's order. */
  readonly slotOf: readonly number[];
  readonly count: number;
  /** Per group: every drain of it encodes from the record's JSON alone (json, ndjson), none from the record object. */
  readonly jsonOnly: readonly boolean[];
}

const cache = new WeakMap<readonly DrainPlan[], ShapeGroups>();

export function shapeGroups(plans: readonly DrainPlan[]): ShapeGroups {
  let groups = cache.get(plans);
  if (groups === undefined) {
    const index = new Map<string, number>();
    const jsonOnly: boolean[] = [];
    const slotOf = plans.map((p) => {
      let slot = index.get(p.shapeKey);
      if (slot === undefined) index.set(p.shapeKey, (slot = index.size));
      jsonOnly[slot] = (jsonOnly[slot] ?? true) && p.encoder.usesRecordJson;
      return slot;
    });
    groups = { slotOf, count: index.size, jsonOnly };
    cache.set(plans, groups);
  }
  return groups;
}

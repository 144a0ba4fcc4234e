/**
 * One ingested record's check (CONTRACT part 3): its refusal, or what the sink is given for it.
 * Applied as each record is parsed, on the API's thread for a small body and on the body reader's
 * thread for a large one (body-reader.ts).
 */
import { MAX_FIELD_DEPTH, textRefusal, validateRecord } from '../../model/record.js';
import type { BodyItem } from './record-body.js';

/** A record accepted so far: what the sink is given for it. */
export interface Checked { orgId: string; agentId: string; payload: string }

/** One record's refusal, or what the sink is given for it. */
export function checkItem(item: BodyItem, keyOrgId: string | undefined): string | Checked {
  if (item.kind === 'invalid') return 'not valid JSON';
  if (item.kind === 'not_utf8') return `not valid UTF-8 (byte ${item.at} of the record)`;
  if (item.kind === 'too_deep') return `${item.field} nests deeper than ${MAX_FIELD_DEPTH} levels`;
  // Validated before it is serialised: JSON.stringify recurses, and validation bounds the depth.
  const valid = validateRecord(item.value);
  if (!valid.ok) return valid.reason;
  const payload = JSON.stringify(item.value);
  // What the worker's decoder would dead-letter in the text it will read (too large, holding NUL),
  // refused here instead of accepted; the value just parsed and validated is not parsed again.
  const refused = textRefusal(payload, item.value);
  if (refused !== undefined) return refused;
  if (valid.record.orgId !== keyOrgId) return "orgId is not the credential's organization";
  return { orgId: valid.record.orgId, agentId: valid.record.agentId, payload };
}

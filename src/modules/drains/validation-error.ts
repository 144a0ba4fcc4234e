/**
 * A drain body that breaks its schema answers as the spec's drain rules do
 * (part 7.3): `400 DRAIN_VALIDATION_FAILED` naming one field, with its rule.
 * The field is the body's top-level one (`sampling`, `agents`), but a list
 * entry of its own for headers and scrub rules (`headers[0].name`,
 * `scrubRules[2]`), as the rules name them.
 */
import type { AppError } from '../../errors.js';
import type { SchemaIssue } from '../../api/kernel/schema.js';
import { UNSTORABLE_TEXT } from '../../api/kernel/storable-text.js';
import { drainValidation } from './errors.js';
import { HEADER_SHAPE, PAUSE_BODY, SCRUB_RULE_SHAPE } from './schemas.js';

/** Lists whose entries the rules name one by one. */
const ENTRY_LISTS = new Set(['headers', 'scrubRules']);
/** Rules about a whole entry, whichever of its fields broke them. */
const ENTRY_RULES = new Set([HEADER_SHAPE, SCRUB_RULE_SHAPE]);

/** The field a rule names, in the bracket form of the spec (`headers[0].value`). */
export function fieldOf(issue: SchemaIssue): string {
  const [top = 'body', index, inner] = issue.path.split('.');
  // Text the store cannot hold is named by the body's field that holds it, wherever inside.
  if (issue.constraint === UNSTORABLE_TEXT) return top;
  if (!ENTRY_LISTS.has(top) || index === undefined || !/^\d+$/.test(index)) return top;
  return inner === undefined || ENTRY_RULES.has(issue.message) ? `${top}[${index}]` : `${top}[${index}].${inner}`;
}

/**
 * Which failure answers when several did: an unknown field (or a PATCH of `type`) first, a missing
 * required field last, as the rules were checked one field after another.
 */
const rank = (issue: SchemaIssue): number => {
  const topLevel = !issue.path.includes('.');
  if (topLevel && (issue.constraint === 'additionalProperties' || issue.constraint === 'not')) return 0;
  if (topLevel && issue.constraint === 'required') return 2;
  return 1;
};

/** The route config mapper of the create and PATCH routes. */
export function drainBodyError(issues: readonly SchemaIssue[]): AppError {
  const first = [...issues].sort((a, b) => rank(a) - rank(b))[0]!;
  return drainValidation(fieldOf(first), [ruleOf(first)]);
}

/** The pause route's: its body is optional, and holds a reason at most. */
export function pauseBodyError(issues: readonly SchemaIssue[]): AppError {
  const first = issues[0]!;
  return drainValidation(first.message === PAUSE_BODY ? 'body' : fieldOf(first), [ruleOf(first)]);
}

/** The rule's words; unstorable text in the words of the field that holds it. */
const ruleOf = (issue: SchemaIssue): string =>
  issue.constraint === UNSTORABLE_TEXT ? `${fieldOf(issue)} must not contain NUL characters or unpaired surrogates` : issue.message;

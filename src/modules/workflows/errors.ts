/** The workflow family's error codes (spec 03 part 7), defined once for the registry and docs/api.md. */
import { defineErrors } from '../../api/kernel/error-registry.js';

export const WorkflowErrors = defineErrors('workflows', {
  WORKFLOW_NOT_FOUND: { status: 404, fields: ['workflowId'], when: 'a workflow definition that does not exist or belongs to another agent (`workflowId`/`workflowName` of a start), or a `composeId` that names no chat-composed definition of the agent' },
  RUN_NOT_FOUND: { status: 404, fields: ['runId'], when: 'a run that does not exist, or belongs to another agent than the path\'s' },
  ROLLUP_RANGE_TOO_WIDE: { status: 400, fields: ['maxDays', 'days'], when: '`GET /workflows/:agentId/definitions/:workflowId/rollup` over a range of more than 90 days (`days`: the range rounded up to whole days)' },
  BAD_CURSOR: { status: 400, when: '`GET /workflows/:agentId/runs` with a `cursor` that is not one this route returned for the same sort' },
  CORRELATION_KEY_INVALID: { status: 400, fields: ['correlationKey'], when: 'a `correlationKey` filter over 128 characters or with characters other than letters, digits, `:`, `_`, `-`, `.`, `/`' },
});

export const BatchErrors = defineErrors('workflows', {
  BATCH_TOO_LARGE: { status: 400, fields: ['max', 'count'], when: '`POST /workflows/:agentId/runs/batch` with more than 200 items' },
  BATCH_ITEM_INVALID: { status: 400, fields: ['index', 'issues'], when: 'a batch item breaks a rule (its key missing or repeated in the batch, its input not matching `inputSchema`, ...): `index` names it, `issues[] {path, constraint, message}` say why; no run is created' },
  RUNS_IN_FLIGHT: { status: 409, fields: ['workflowId'], when: 'a batch with `inFlight: forbid` for a definition with a run not yet terminal; no run is created' },
});

export const RecoveryErrors = defineErrors('workflows', {
  STEP_NOT_FOUND: { status: 404, fields: ['runId', 'stepId'], when: 'a retry or resolve of a step the run does not have' },
  NOT_RUN_CREATOR: { status: 403, fields: ['runId'], when: 'a resolve, budget raise or erase of a run by someone other than its creator or an organization admin' },
  STEP_NOT_PARKED: { status: 409, fields: ['stepId', 'status'], when: 'a retry or resolve of a step not parked on an exception (and whose last park was not recovered already)' },
  STEP_RETRY_CAP: { status: 409, fields: ['stepId', 'attempt', 'toAttempt', 'maxAttempts'], when: 'a retry that would pass attempt 20' },
  RUN_TERMINAL: { status: 409, fields: ['runId', 'status'], when: 'a retry or resolve on a run already terminal' },
  RESOLVE_OUTPUT_INVALID: { status: 400, fields: ['stepId', 'issues'], when: "a resolve `complete` whose `output` does not match the step's `outputSchema`" },
  OUTPUT_TOO_LARGE: { status: 413, fields: ['field', 'max'], when: 'a resolve `output` over 262144 bytes of JSON' },
  CAP_EXCEEDED: { status: 400, fields: ['field', 'cap'], when: "a budget raise above the organization's policy" },
  BUDGET_NOT_RAISABLE: { status: 409, fields: ['runId', 'status'], when: 'a budget raise of a run not parked on its budget' },
  RUN_NOT_TERMINAL: { status: 409, fields: ['runId', 'status', 'nextAction'], when: 'an erase of a run not yet terminal (`nextAction: cancel`)' },
});

export const StartErrors = defineErrors('workflows', {
  ORIGIN_THREAD_INVALID: { status: 400, fields: ['field', 'max'], when: 'a start whose `originThreadId` is not a string of 1 to 256 characters without control characters' },
  CALLBACK_THREAD_REQUIRED: { status: 400, fields: ['field'], when: 'a start with `callback: true` and no `originThreadId` to call back on' },
});

export const ControlErrors = defineErrors('workflows', {
  CONTROL_UNAVAILABLE: { status: 503, fields: ['retryAfterSeconds'], when: 'a start, batch, cancel, retry, resolve, budget raise or erase while the store cannot be reached; a start or batch whose runs all carry idempotency keys has `retryAfterSeconds` (also as `Retry-After`): a retry with the same keys is safe; without it the change may have applied' },
});

/** The control routes' answer to a store outage (kernel/store-outage.ts decides whether a retry is safe). */
export const controlUnavailable = (retryAfterSeconds: number | undefined) =>
  retryAfterSeconds === undefined
    ? ControlErrors.CONTROL_UNAVAILABLE('The workflow control store is unavailable; the change may have been applied: read the run before repeating it.')
    : ControlErrors.CONTROL_UNAVAILABLE('The workflow control store is unavailable; retry with the same idempotency keys.', { retryAfterSeconds });

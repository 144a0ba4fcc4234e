/**
 * The run state machine (spec 03 part 3, contract W3): every move of a run's
 * `status` and `gate` is decided by `transition`, and every write of a status
 * in this family goes through it (the writes then apply it conditionally on
 * the status it started from, so two movers cannot both win).
 */

export type RunStatus = 'queued' | 'gated' | 'running' | 'suspended' | 'completed' | 'failed' | 'cancelled' | 'timed_out' | 'abandoned';

export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'gated', 'running', 'suspended', 'completed', 'failed', 'cancelled', 'timed_out', 'abandoned'];
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'timed_out', 'abandoned'];
export const isTerminal = (s: RunStatus): boolean => TERMINAL_STATUSES.includes(s);

/** The organization quota a start is held back by: its `maxConcurrentRuns`, or its `maxSuspendedRuns` (contract W8). */
export type QuotaCode = 'concurrency_cap' | 'suspended_cap';

export type Gate =
  | { kind: 'quota'; code: QuotaCode; since: number }
  /** The run was queued when its organization was archived (contract W8): it waits until the organization is not. */
  | { kind: 'org_archived'; since: number }
  | { kind: 'exception'; since: number; stepId: string; attempt: number; code: string }
  | { kind: 'budget'; since: number; stepId: string; dimension: 'credits'; spent: number; cap: number };

export type RunEvent =
  /** A start accepted: within the organization's quotas, or held back by one (`cap`). */
  | { type: 'admit'; cap: QuotaCode | null; at: number }
  /** A slot freed: the oldest run gated on the cap goes on. */
  | { type: 'release' }
  /** The run's organization is archived: a queued run waits. */
  | { type: 'archive'; at: number }
  /** The organization is no longer archived: the waiting run is queued again. */
  | { type: 'unarchive' }
  /** An executor takes the run (a queued one, or a running one whose executor's lease ran out). */
  | { type: 'claim' }
  /** A step failed past its automatic retries. */
  | { type: 'park_exception'; at: number; stepId: string; attempt: number; code: string }
  /** A `costly` step's reserve is over the run's credit cap. */
  | { type: 'park_budget'; at: number; stepId: string; spent: number; cap: number }
  /** Every step is done. */
  | { type: 'complete' }
  /** A cancel with no step running: at once, or at the next step boundary. */
  | { type: 'cancel' }
  /** A cancel forced after `forceAvailableAt` while a step runs. */
  | { type: 'force' }
  /** `budget.maxDurationSeconds` after `startedAt` passed. */
  | { type: 'deadline' }
  /** A parked step re-armed (retry) or resolved with skip or complete: the run goes on. */
  | { type: 'recover' }
  /** A parked step resolved with fail. */
  | { type: 'fail' }
  /** A budget raise covering the next step's reserve. */
  | { type: 'resume' }
  /** A budget raise short of the next step's reserve: the run stays parked, under the cap now in force. */
  | { type: 'repark_budget'; since: number; stepId: string; spent: number; cap: number };

export interface RunState {
  status: RunStatus;
  gate: Gate | null;
}

/** Where `event` moves a run in `from` (null: not yet created); undefined when the move is not allowed. */
export function transition(from: RunStatus | null, event: RunEvent): RunState | undefined {
  if (from !== null && isTerminal(from)) return undefined;
  switch (event.type) {
    case 'admit':
      if (from !== null) return undefined;
      return event.cap !== null ? { status: 'gated', gate: { kind: 'quota', code: event.cap, since: event.at } } : { status: 'queued', gate: null };
    case 'release':
      return from === 'gated' ? { status: 'queued', gate: null } : undefined;
    case 'archive':
      return from === 'queued' ? { status: 'gated', gate: { kind: 'org_archived', since: event.at } } : undefined;
    case 'unarchive':
      return from === 'gated' ? { status: 'queued', gate: null } : undefined;
    case 'claim':
      return from === 'queued' || from === 'running' ? { status: 'running', gate: null } : undefined;
    case 'park_exception':
      return from === 'running'
        ? { status: 'suspended', gate: { kind: 'exception', since: event.at, stepId: event.stepId, attempt: event.attempt, code: event.code } }
        : undefined;
    case 'park_budget':
      return from === 'running'
        ? { status: 'gated', gate: { kind: 'budget', since: event.at, stepId: event.stepId, dimension: 'credits', spent: event.spent, cap: event.cap } }
        : undefined;
    case 'complete':
      return from === 'running' ? { status: 'completed', gate: null } : undefined;
    case 'cancel':
      return from === null ? undefined : { status: 'cancelled', gate: null };
    case 'force':
      return from === 'running' ? { status: 'abandoned', gate: null } : undefined;
    case 'deadline':
      return from === null ? undefined : { status: 'timed_out', gate: null };
    case 'recover':
      return from === 'suspended' ? { status: 'queued', gate: null } : undefined;
    case 'fail':
      return from === 'suspended' ? { status: 'failed', gate: null } : undefined;
    case 'resume':
      return from === 'gated' ? { status: 'queued', gate: null } : undefined;
    case 'repark_budget':
      return from === 'gated'
        ? { status: 'gated', gate: { kind: 'budget', since: event.since, stepId: event.stepId, dimension: 'credits', spent: event.spent, cap: event.cap } }
        : undefined;
  }
}

/** `transition`, for a move the caller has established is allowed; a programming error otherwise. */
export function mustTransition(from: RunStatus | null, event: RunEvent): RunState {
  const next = transition(from, event);
  if (!next) throw new Error(`run state machine: ${event.type} is not a move from ${from ?? '(none)'}`);
  return next;
}

/** The statuses a move may start from (for conditional writes: `where status = any(...)`). */
export function sourcesOf(event: RunEvent): RunStatus[] {
  return RUN_STATUSES.filter((s) => transition(s, event) !== undefined);
}

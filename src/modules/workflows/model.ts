/** A run as stored, and the read forms of spec 03 part 2.4 (summary, detail) and of a definition list item. */
import type { Gate, RunStatus } from './state.js';
import { isTerminal } from './state.js';
import type { Graph, JsonSchema, Step } from './graph.js';

export interface Budget {
  maxCredits?: number;
  maxSteps: number;
  maxDurationSeconds: number;
  maxJobSeconds?: number;
  unit: 'credits';
  spent: { credits: number; steps: number };
}

export interface CancelState {
  requestedAt: number;
  forceAvailableAt: number;
  reason?: string;
}

export type NotifyMode = 'emailApp' | 'email' | 'app' | 'off';
export interface NotifyTarget {
  channel: 'chatapp' | 'sms' | 'email' | 'webchat' | 'teamchat';
  threadId: string;
}
/** The customer a run acts for; its creator stays the calling user (who alone may approve). */
export interface CustomerPrincipal {
  kind: 'customer';
  externalId: string;
}
export interface Workspace {
  repo?: string;
  ref?: string;
  credentialsRef?: string;
  sizeGb: number;
}

export interface RunRow {
  id: string;
  org_id: string;
  agent_id: string;
  workflow_id: string | null;
  workflow_name: string | null;
  workflow_version_id: string | null;
  form: 'graph' | 'script';
  origin: 'definition' | 'inline' | 'compose';
  trigger: string;
  status: RunStatus;
  gate: Gate | null;
  created_by: string;
  correlation_key: string | null;
  tags: string[];
  batch_id: string | null;
  input: unknown;
  output: unknown;
  has_output: boolean;
  graph: Graph;
  budget: Budget;
  error: { code: string; message: string; stepId?: string } | null;
  cancel: CancelState | null;
  next_step: number;
  lease_owner: string | null;
  lease_until: Date | null;
  event_seq: number;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
  completed_at: Date | null;
  deadline_at: Date | null;
  duration_ms: number | null;
  budget_raises: { at: number; by: string; caps: Record<string, number>; note?: string }[];
  origin_thread_id: string | null;
  callback: boolean;
  /** null: a run whose start took no notification settings (a batch item). */
  notify_mode: NotifyMode | null;
  notify_target: NotifyTarget | null;
  principal: CustomerPrincipal | null;
  workspace: Workspace | null;
  state_seed: unknown;
}

/** One entry of a run's event log (written by the store's triggers of migration workflows/004). */
export interface EventRow {
  seq: number;
  kind: string;
  at: Date;
  step_id: string | null;
  attempt: number | null;
  status: string | null;
  code: string | null;
}

export function eventItem(e: EventRow): Record<string, unknown> {
  return {
    seq: e.seq, kind: e.kind, at: e.at.getTime(),
    ...(e.step_id !== null ? { stepId: e.step_id } : {}), ...(e.attempt !== null ? { attempt: e.attempt } : {}),
    ...(e.status !== null ? { status: e.status } : {}), ...(e.code !== null ? { code: e.code } : {}),
  };
}

export interface StepRow {
  run_id: string;
  idx: number;
  step_id: string;
  kind: string;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'suspended' | 'cancelled';
  attempt: number;
  output: unknown;
  error: { code: string; message: string } | null;
  started_at: Date | null;
  ended_at: Date | null;
  retry_budget: number | null;
  park_seq: number;
  recovery: Recovery | null;
}

/** How a step's last park was recovered. */
export interface Recovery {
  seq: number;
  kind: 'retried' | 'resolved';
  at: number;
  by: string;
  outcome: string;
}

export interface DefinitionRow {
  id: string;
  agent_id: string;
  org_id: string;
  name: string;
  description: string | null;
  form: 'graph' | 'script';
  dynamic: boolean;
  active_version_id: string | null;
  updated_at: Date;
  input_schema: JsonSchema | null;
}

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime());

export function definitionItem(d: DefinitionRow): Record<string, unknown> {
  return {
    workflowId: d.id, name: d.name, ...(d.description !== null ? { description: d.description } : {}), form: d.form, dynamic: d.dynamic,
    active: d.active_version_id !== null, ...(d.active_version_id !== null ? { activeVersionId: d.active_version_id } : {}),
    ...(d.input_schema !== null ? { inputSchema: d.input_schema } : {}), updatedAt: d.updated_at.getTime(),
  };
}

export function countsOf(steps: readonly Pick<StepRow, 'status'>[]): Record<string, number> {
  const c = { total: steps.length, completed: 0, failed: 0, skipped: 0, running: 0, suspended: 0, pending: 0, cancelled: 0 };
  for (const s of steps) c[s.status] += 1;
  return c;
}

/** How far along the run is, in one word: `pending` (not started), `executing`, `parked`, `finished`. */
const phaseOf = (s: RunStatus): string =>
  isTerminal(s) ? 'finished' : s === 'running' ? 'executing' : s === 'queued' || (s === 'gated') ? 'pending' : 'parked';

export function runSummary(r: RunRow, steps: readonly StepRow[]): Record<string, unknown> {
  const current = steps.find((s) => s.status === 'running' || s.status === 'suspended') ?? (isTerminal(r.status) ? undefined : steps[r.next_step]);
  const phase = r.status === 'gated' && r.gate?.kind !== 'quota' ? 'parked' : phaseOf(r.status);
  return {
    runId: r.id, workflowId: r.workflow_id, workflowName: r.workflow_name, workflowVersionId: r.workflow_version_id, form: r.form,
    agentId: r.agent_id, orgId: r.org_id, status: r.status, gate: r.gate, trigger: r.trigger, origin: r.origin,
    createdBy: { subjectType: 'user', subjectId: r.created_by }, counts: countsOf(steps),
    createdAt: r.created_at.getTime(), startedAt: ms(r.started_at), updatedAt: r.updated_at.getTime(), completedAt: ms(r.completed_at),
    ...(isTerminal(r.status) && r.duration_ms !== null ? { durationMs: Number(r.duration_ms) } : {}),
    correlationKey: r.correlation_key, tags: r.tags, principalKind: r.principal?.kind ?? 'user', batchId: r.batch_id, goalId: null,
    cancel: r.cancel, usage: { credits: r.budget.spent.credits, steps: r.budget.spent.steps }, error: r.error, hasOutput: r.has_output,
    restricted: false, stepCount: steps.length, currentLabel: current?.step_id ?? null, phase, eventSeq: r.event_seq,
  };
}

/** Output kept inline up to this many bytes of JSON; above, a reference (contract W5). */
export const INLINE_OUTPUT_MAX = 262_144;

export function outputForm(r: RunRow): unknown {
  if (!r.has_output) return null;
  const text = JSON.stringify(r.output);
  if (Buffer.byteLength(text, 'utf8') <= INLINE_OUTPUT_MAX) return r.output;
  return { __cdnRef: true, outputPreview: text.slice(0, 1024), outputRef: `/workflows/${r.agent_id}/runs/${r.id}/output` };
}

export interface DetailOptions {
  full: boolean;
  /** The caller holds workflows:read-outputs. */
  payloads: boolean;
  /** The caller is the run's creator or holds org:manage. */
  receipts: boolean;
  /** The run's end notifications (listed with the receipt). */
  notifications?: readonly NotificationListRow[];
}

export function runDetail(r: RunRow, steps: readonly StepRow[], o: DetailOptions): Record<string, unknown> {
  const graphSteps: Step[] = r.graph.steps;
  const deadlineAt = ms(r.deadline_at);
  const detail: Record<string, unknown> = {
    ...runSummary(r, steps),
    steps: steps.map((s) => ({
      stepId: s.step_id, kind: s.kind, status: s.status, attempt: s.attempt, startedAt: ms(s.started_at), endedAt: ms(s.ended_at),
      ...(s.error ? { error: s.error } : {}),
    })),
    edges: graphSteps.slice(1).map((s, i) => ({ from: graphSteps[i]!.id, to: s.id })),
    suspensions: r.gate?.kind === 'exception' ? [{ stepId: r.gate.stepId, attempt: r.gate.attempt, code: r.gate.code, since: r.gate.since }] : [],
    budget: {
      ...(r.budget.maxCredits !== undefined ? { maxCredits: r.budget.maxCredits } : {}),
      maxSteps: r.budget.maxSteps, maxDurationSeconds: r.budget.maxDurationSeconds, deadlineAt, unit: 'credits',
      spent: { credits: r.budget.spent.credits, actionsEstimate: r.budget.spent.steps, steps: r.budget.spent.steps }, reserved: 0,
      ...(r.budget.maxCredits !== undefined ? { remaining: Math.max(0, r.budget.maxCredits - r.budget.spent.credits) } : {}),
    },
    budgetRaises: r.budget_raises,
  };
  if (o.full) {
    detail.input = o.payloads ? r.input : { __hidden: true };
    detail.output = o.payloads ? outputForm(r) : { __hidden: true };
    detail.stateSeed = o.payloads ? r.state_seed : { __hidden: true };
    detail.originThreadId = r.origin_thread_id;
    detail.callback = r.callback;
    detail.principal = r.principal;
    detail.workspace = r.workspace;
    if (o.receipts) {
      detail.receipt = receiptOf(r, steps);
      detail.notify = r.notify_mode === null ? null : { mode: r.notify_mode, target: r.notify_target };
      detail.notifications = (o.notifications ?? []).map(notificationItem);
    }
  }
  return detail;
}

/** One run-end notification as stored (migration workflows/005; notifier.ts). */
export interface NotificationListRow {
  kind: 'email' | 'app' | 'target' | 'callback';
  channel: string | null;
  recipient: string | null;
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  delivery_id: string | null;
  error: { code: string; message: string } | null;
  attempts: number;
}

/** A notification in the run's full detail (contract W8): `{kind, channel, to, status, attempts, deliveryId?, error?}`. */
export function notificationItem(n: NotificationListRow): Record<string, unknown> {
  return {
    kind: n.kind, channel: n.channel, to: n.recipient, status: n.status, attempts: n.attempts,
    ...(n.delivery_id !== null && n.status !== 'pending' ? { deliveryId: n.delivery_id } : {}), ...(n.error !== null ? { error: n.error } : {}),
  };
}

/** The run-end summary as a message: a subject and a plain text body (the receipt's facts). */
export function runEndSummary(r: RunRow, steps: readonly StepRow[], agentName: string): { subject: string; text: string } {
  const c = countsOf(steps);
  const name = r.workflow_name ?? `an inline ${r.form}`;
  const lines = [
    `The workflow run ${r.id} (${name}, agent ${agentName}) ended ${r.status}.`,
    `Steps: ${c.completed} completed, ${c.skipped} skipped, ${c.failed} failed, ${c.cancelled} cancelled, ${c.total} in all.`,
    `Usage: ${r.budget.spent.steps} steps, ${r.budget.spent.credits} credits.`,
  ];
  if (r.duration_ms !== null) lines.push(`Duration: ${Number(r.duration_ms)} ms.`);
  if (r.completed_at !== null) lines.push(`Ended at ${r.completed_at.toISOString()}.`);
  if (r.error) lines.push(`Error ${r.error.code}${r.error.stepId ? ` at step ${r.error.stepId}` : ''}: ${r.error.message}`);
  return { subject: `Workflow run ${name} ${r.status}`, text: `${lines.join('\n')}\n` };
}

/**
 * The run-end summary (what the run's end notifications carry, notifier.ts): null until the run is
 * terminal.
 */
export function receiptOf(r: RunRow, steps: readonly StepRow[]): Record<string, unknown> | null {
  if (!isTerminal(r.status)) return null;
  return {
    status: r.status, completedAt: ms(r.completed_at), durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
    steps: countsOf(steps), usage: { credits: r.budget.spent.credits, steps: r.budget.spent.steps }, ...(r.error ? { error: r.error } : {}),
  };
}

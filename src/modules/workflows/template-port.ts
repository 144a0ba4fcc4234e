/**
 * The workflows family's part of a template install (platform-deps.ts WorkflowTemplatePort): the
 * agent's deployed workflows as a template version freezes them, a run started with trigger
 * `template` (an `onInstall` hook), and in-flight runs moved to the active versions (`migrateRuns`).
 * Starts and moves run on the caller's unit of work, through the run state machine (state.ts).
 */
import { newId } from '../../model/ids.js';
import type { Sql } from '../../store/sql.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import type { RunMigration, WorkflowSnapshot, WorkflowStartOutcome, WorkflowTemplatePort } from '../platform-deps.js';
import { stepsOf, validateValue, type Graph, type Step } from './graph.js';
import { createWorkflowsRepo } from './repository.js';
import { admissionCounts, budgetOf, finishRun, insertRunTx, quotaHolding } from './service.js';
import { mustTransition } from './state.js';
import { activeDefinitions } from './sql/definitions.js';
import { lockOutdatedRuns, moveRunToVersion } from './sql/runs.js';
import type { RunRow } from './model.js';

/** The statuses a run can be moved from: not started, or parked (`include: suspended` takes only parked ones). */
const IN_FLIGHT = { all: ['queued', 'gated', 'suspended'], suspended: ['suspended', 'gated'] } as const;

/** Step ids in order: a run moves to another version only when its steps are the same. */
const shapeOf = (steps: readonly Step[]): string => JSON.stringify(steps.map((s) => [s.id, s.kind]));

export function createWorkflowTemplatePort(o: { wake: () => void }): WorkflowTemplatePort {
  return {
    async snapshot(sql: Sql, agentId: string): Promise<WorkflowSnapshot[]> {
      const rows = await activeDefinitions(sql, agentId);
      return rows.map((r) => {
        const steps = stepsOf(r.form, r.graph);
        return {
          key: r.name, workflowId: r.id, displayName: r.name, ...(r.description !== null ? { description: r.description } : {}),
          version: r.active_version_id, form: r.form, stepCount: steps.length,
          // The graph language (graph.ts) has no approval, schedule, signal-wait or Job-tier step.
          hasApproval: false, hasSchedule: false, hasSignalWait: false, hasJobTier: false,
          ...(r.input_schema !== null ? { inputSchema: r.input_schema } : {}),
        };
      });
    },

    async start(tx: UnitOfWork, s): Promise<WorkflowStartOutcome> {
      const repo = createWorkflowsRepo(tx.sql);
      const def = await repo.findDefinition(s.agentId, { name: s.workflowName });
      if (!def || def.active_version_id === null) return { outcome: 'not-found' };
      const version = await repo.version(def.id, def.active_version_id);
      if (!version) return { outcome: 'not-found' };
      if (version.input_schema) {
        const issues = validateValue(version.input_schema, s.input, 'input');
        if (issues.length > 0) return { outcome: 'refused', code: 'VALIDATION_FAILED', message: issues.map((i) => i.message).join('; ') };
      }
      const policy = await repo.policy(s.orgId);
      const now = new Date();
      // The organization's admission lock first: this start is one of an install's statements, never retried on its own.
      const state = mustTransition(null, { type: 'admit', cap: quotaHolding(await admissionCounts(tx.sql, s.orgId, { lock: true }), policy), at: now.getTime() });
      const caller = { userId: s.userId, orgId: s.orgId, agentId: s.agentId, mayWrite: false };
      const target = { workflowId: def.id, workflowName: def.name, versionId: version.id, form: def.form, origin: 'definition' as const, graph: { steps: stepsOf(def.form, version.graph) } };
      const body = await insertRunTx(tx.sql, caller, { workflowName: def.name, ...(s.input !== undefined ? { input: s.input } : {}) }, target, state, budgetOf(undefined, policy), null, now, null, 'template');
      await tx.audit({
        orgId: s.orgId, action: 'workflows.run.started', actor: { type: 'user', id: s.userId }, targetType: 'workflow_run', targetId: body.runId,
        details: { agentId: s.agentId, workflowId: def.id, workflowVersionId: version.id, origin: 'definition', trigger: 'template', status: state.status },
      });
      return { outcome: 'started', runId: body.runId, status: state.status };
    },

    async migrateRuns(tx: UnitOfWork, m): Promise<RunMigration> {
      const names = m.workflowNames ?? null;
      const runs = await lockOutdatedRuns(tx.sql, m.agentId, m.orgId, [...IN_FLIGHT[m.include]], names);
      const counts = { resumed: 0, cancelled: 0, reseeded: 0, left: 0 };
      const skipped: string[] = [];
      const reseeded: string[] = [];
      const policy = runs.length > 0 ? await createWorkflowsRepo(tx.sql).policy(m.orgId) : undefined;
      for (const r of runs) {
        const activeSteps = stepsOf(r.active_form, r.active_graph);
        const cancel = async (): Promise<boolean> => {
          const next = mustTransition(r.status, { type: 'cancel' });
          const at = Date.now();
          return finishRun(tx.sql, r, next.status, { cancel: { requestedAt: at, forceAvailableAt: at, ...(m.reason !== undefined ? { reason: m.reason } : {}) } });
        };
        if (m.strategy === 'cancel-and-reseed') {
          if (!(await cancel())) continue;
          counts.cancelled++;
          const state = mustTransition(null, { type: 'admit', cap: quotaHolding(await admissionCounts(tx.sql, m.orgId, { lock: true }), policy!), at: Date.now() });
          const target = { workflowId: r.workflow_id, workflowName: r.workflow_name, versionId: r.active_version_id, form: r.active_form, origin: 'definition' as const, graph: { steps: activeSteps } };
          const caller = { userId: m.userId, orgId: m.orgId, agentId: m.agentId, mayWrite: false };
          const started = await insertRunTx(tx.sql, caller, { workflowName: r.workflow_name ?? undefined, ...(r.input !== null ? { input: r.input } : {}) }, target, state, budgetOf(undefined, policy!), null, new Date(), null, 'template');
          counts.reseeded++;
          reseeded.push(started.runId);
          continue;
        }
        if (shapeOf(r.graph.steps) === shapeOf(activeSteps)) {
          await moveRunToVersion(tx.sql, r.id, r.active_version_id, JSON.stringify({ steps: activeSteps }));
          counts.resumed++;
        } else if (m.onIncompatible === 'cancel') {
          if (await cancel()) counts.cancelled++;
        } else {
          counts.left++;
          skipped.push(r.id);
        }
      }
      // One migration id per call that moved anything, named by its audit entry.
      const migrationIds = runs.length > 0 ? [`wfm_${newId()}`] : [];
      if (runs.length > 0) {
        await tx.audit({
          orgId: m.orgId, action: 'workflows.run.migrated', actor: { type: 'user', id: m.userId }, targetType: 'agent', targetId: m.agentId,
          details: { migrationId: migrationIds[0], strategy: m.strategy, onIncompatible: m.onIncompatible, include: m.include, counts, reseeded, skipped },
        });
      }
      return { migrationIds, counts, skipped };
    },

    wake: o.wake,
  };
}

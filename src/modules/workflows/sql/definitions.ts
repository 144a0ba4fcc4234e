/**
 * The statements on definitions, their versions and the organizations' run policies outside the
 * routes' reads (repository.ts): the seed's upserts (seed.ts) and the template snapshot
 * (template-port.ts). Each takes the handle it runs on.
 */
import type { Sql } from '../../../store/sql.js';
import type { Graph } from '../graph.js';

/** A deployed definition (not composed) with its active version's input schema and graph. */
export interface ActiveDefinitionRow {
  id: string;
  name: string;
  description: string | null;
  form: 'graph' | 'script';
  active_version_id: string;
  input_schema: unknown;
  graph: Graph | null;
}

/** The agent's deployed definitions (not composed) with their active versions, by name. */
export async function activeDefinitions(sql: Sql, agentId: string): Promise<ActiveDefinitionRow[]> {
  return sql.query<ActiveDefinitionRow>(
    `select d.id, d.name, d.description, d.form, d.active_version_id, v.input_schema, v.graph
         from workflow_definitions d join workflow_versions v on v.id = d.active_version_id
         where d.agent_id = $1 and not d.dynamic order by d.name`,
    [agentId],
  );
}

/** The organization the agent belongs to. */
export async function agentOrgId(tx: Sql, agentId: string): Promise<string | undefined> {
  const [agent] = await tx.query<{ org_id: string }>('select org_id from agents where id = $1', [agentId]);
  return agent?.org_id;
}

/** The definition written (inserted, or every column replaced), updated now. */
export async function upsertDefinition(tx: Sql, d: { id: string; agentId: string; orgId: string; name: string; description: string | null; form: string; dynamic: boolean; activeVersionId: string | null }): Promise<void> {
  await tx.query(
    `insert into workflow_definitions (id, agent_id, org_id, name, description, form, dynamic, active_version_id, updated_at) values ($1,$2,$3,$4,$5,$6,$7,$8, date_trunc('milliseconds', now()))
         on conflict (id) do update set agent_id = excluded.agent_id, org_id = excluded.org_id, name = excluded.name, description = excluded.description,
           form = excluded.form, dynamic = excluded.dynamic, active_version_id = excluded.active_version_id, updated_at = excluded.updated_at`,
    [d.id, d.agentId, d.orgId, d.name, d.description, d.form, d.dynamic, d.activeVersionId],
  );
}

/** The version written (inserted, or every column replaced); schema and graph as JSON text. */
export async function upsertVersion(tx: Sql, v: { id: string; workflowId: string; position: number; inputSchema: string | null; graph: string | null; script: string | null }): Promise<void> {
  await tx.query(
    `insert into workflow_versions (id, workflow_id, position, input_schema, graph, script) values ($1,$2,$3,$4::jsonb,$5::jsonb,$6)
           on conflict (id) do update set workflow_id = excluded.workflow_id, position = excluded.position, input_schema = excluded.input_schema,
             graph = excluded.graph, script = excluded.script`,
    [v.id, v.workflowId, v.position, v.inputSchema, v.graph, v.script],
  );
}

/** The organization's run policy written (inserted, or every cap replaced). */
export async function upsertPolicy(tx: Sql, orgId: string, p: { maxConcurrentRuns: number; maxCredits: number; maxSteps: number; maxDurationSeconds: number; maxJobSeconds: number; maxSuspendedRuns: number }): Promise<void> {
  await tx.query(
    `insert into workflow_policies (org_id, max_concurrent_runs, max_credits, max_steps, max_duration_seconds, max_job_seconds, max_suspended_runs) values ($1,$2,$3,$4,$5,$6,$7)
         on conflict (org_id) do update set max_concurrent_runs = excluded.max_concurrent_runs, max_credits = excluded.max_credits,
           max_steps = excluded.max_steps, max_duration_seconds = excluded.max_duration_seconds, max_job_seconds = excluded.max_job_seconds,
           max_suspended_runs = excluded.max_suspended_runs`,
    [orgId, p.maxConcurrentRuns, p.maxCredits, p.maxSteps, p.maxDurationSeconds, p.maxJobSeconds, p.maxSuspendedRuns],
  );
}

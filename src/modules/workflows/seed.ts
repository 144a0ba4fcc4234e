/**
 * The seed file's `workflows` and `workflowPolicies` arrays (contract W1):
 * deployed definitions with their versions, and organization policies.
 * Applied idempotently by id (definitions, versions) and by organization.
 */
import type { SeedSection } from '../../seed/seed-file.js';
import { checkGraph, checkSchema } from './graph.js';
import { agentOrgId, upsertDefinition, upsertPolicy, upsertVersion } from './sql/definitions.js';

export interface PolicyLimits {
  maxConcurrentRuns: number;
  maxCredits: number;
  maxSteps: number;
  maxDurationSeconds: number;
  maxJobSeconds: number;
  /** Suspended runs the organization may hold before a start is gated on `suspended_cap` (contract W8). */
  maxSuspendedRuns: number;
}

export const DEFAULT_POLICY: PolicyLimits = { maxConcurrentRuns: 500, maxCredits: 10_000, maxSteps: 1000, maxDurationSeconds: 86_400, maxJobSeconds: 3600, maxSuspendedRuns: 1000 };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ID = /^[A-Za-z0-9_-]{1,128}$/;

interface SeedVersion { id: string; inputSchema?: unknown; graph?: unknown; script?: string }
interface SeedWorkflow {
  id: string; agentId: string; name: string; description?: string; form: 'graph' | 'script'; dynamic?: boolean;
  activeVersionId?: string | null; versions: SeedVersion[];
}

export const workflowsSeed: SeedSection = {
  key: 'workflows',
  check(raw) {
    if (!Array.isArray(raw)) return ['workflows must be an array of objects'];
    const problems: string[] = [];
    const names = new Set<string>();
    const versionIds = new Set<string>();
    raw.forEach((v: unknown, i) => {
      const at = `workflows[${i}]`;
      if (!isObject(v)) return void problems.push(`${at} must be an object`);
      for (const f of ['id', 'agentId'] as const) if (typeof v[f] !== 'string' || !ID.test(v[f])) problems.push(`${at}.${f} must be 1-128 letters, digits, _ or -`);
      if (typeof v.name !== 'string' || v.name.length === 0 || v.name.length > 120) problems.push(`${at}.name must be a string of 1 to 120 characters`);
      else if (names.has(`${String(v.agentId)}\u0000${v.name}`)) problems.push(`${at}.name repeats a name of agent ${String(v.agentId)}`);
      else names.add(`${String(v.agentId)}\u0000${v.name}`);
      if (v.description !== undefined && typeof v.description !== 'string') problems.push(`${at}.description must be a string`);
      if (v.form !== 'graph' && v.form !== 'script') problems.push(`${at}.form must be graph or script`);
      if (v.dynamic !== undefined && typeof v.dynamic !== 'boolean') problems.push(`${at}.dynamic must be a boolean`);
      if (!Array.isArray(v.versions)) return void problems.push(`${at}.versions must be an array`);
      const own = new Set<string>();
      v.versions.forEach((ver: unknown, j) => {
        const vat = `${at}.versions[${j}]`;
        if (!isObject(ver)) return void problems.push(`${vat} must be an object`);
        if (typeof ver.id !== 'string' || !ID.test(ver.id)) problems.push(`${vat}.id must be 1-128 letters, digits, _ or -`);
        else if (versionIds.has(ver.id)) problems.push(`${vat}.id repeats a version id`);
        else {
          versionIds.add(ver.id);
          own.add(ver.id);
        }
        if (ver.inputSchema !== undefined) problems.push(...checkSchema(ver.inputSchema, `${vat}.inputSchema`).map((p) => p.message));
        if (v.form === 'graph') problems.push(...checkGraph(ver.graph, `${vat}.graph`).map((p) => p.message));
        if (v.form === 'script' && typeof ver.script !== 'string') problems.push(`${vat}.script must be a string`);
      });
      if (v.activeVersionId !== undefined && v.activeVersionId !== null && !own.has(v.activeVersionId as string)) problems.push(`${at}.activeVersionId must name one of its versions`);
    });
    return problems;
  },
  async apply(tx, items) {
    for (const w of items as SeedWorkflow[]) {
      const orgId = await agentOrgId(tx, w.agentId);
      if (orgId === undefined) throw new Error(`workflows: agent ${w.agentId} of ${w.id} is not in the seed`);
      await upsertDefinition(tx, { id: w.id, agentId: w.agentId, orgId, name: w.name, description: w.description ?? null, form: w.form, dynamic: w.dynamic ?? false, activeVersionId: w.activeVersionId ?? null });
      for (const [position, v] of w.versions.entries()) {
        await upsertVersion(tx, {
          id: v.id, workflowId: w.id, position, inputSchema: v.inputSchema === undefined ? null : JSON.stringify(v.inputSchema),
          graph: v.graph === undefined ? null : JSON.stringify(v.graph), script: v.script ?? null,
        });
      }
    }
  },
};

const POLICY_FIELDS = ['maxConcurrentRuns', 'maxCredits', 'maxSteps', 'maxDurationSeconds', 'maxJobSeconds', 'maxSuspendedRuns'] as const;

export const workflowPoliciesSeed: SeedSection = {
  key: 'workflowPolicies',
  check(raw, orgIds) {
    if (!Array.isArray(raw)) return ['workflowPolicies must be an array of objects'];
    const problems: string[] = [];
    raw.forEach((v: unknown, i) => {
      const at = `workflowPolicies[${i}]`;
      if (!isObject(v)) return void problems.push(`${at} must be an object`);
      if (typeof v.orgId !== 'string' || !orgIds.has(v.orgId)) problems.push(`${at}.orgId must name an organization of the seed`);
      for (const f of POLICY_FIELDS) {
        const n = v[f];
        if (n === undefined) continue;
        const ok = f === 'maxCredits' ? typeof n === 'number' && Number.isFinite(n) && n > 0 : Number.isInteger(n) && (n as number) >= 1;
        if (!ok) problems.push(`${at}.${f} must be ${f === 'maxCredits' ? 'a number above 0' : 'an integer of at least 1'}`);
      }
    });
    return problems;
  },
  async apply(tx, items) {
    for (const p of items as (Partial<PolicyLimits> & { orgId: string })[]) {
      const v = { ...DEFAULT_POLICY, ...p };
      await upsertPolicy(tx, p.orgId, v);
    }
  },
};

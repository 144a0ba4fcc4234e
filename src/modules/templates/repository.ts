/**
 * The template tables, over `Sql` (the store's connection, or a unit of
 * work's transaction). Visibility is part of every template read: a template
 * is seen when it is public or of one of the caller's organizations
 * (`orgIds`); anything else is not found.
 */
import type { Sql } from '../../store/sql.js';
import type { Json } from './seal.js';
import type { ApprovalStatus, Visibility } from './state.js';

export interface Template {
  id: string; name: string; displayName: string; description: string; creatorId: string; creatorOrgId: string;
  sourceAgentId: string | null; sourceBaseAgentId: string | null; visibility: Visibility; pendingVisibility: Visibility | null;
  listed: boolean; firstParty: boolean; latestVersion: number; latestApprovedVersion: number | null;
  installCount: number; activeInstallCount: number; createdAt: Date; updatedAt: Date;
}

/** The authored sections of a version (spec 03 part 4.4: inherited when omitted, cleared by empty or null). */
export const AUTHORED_SECTIONS = ['connections', 'personaTemplate', 'triggerPresets', 'paramsMeta', 'onInstall', 'onUninstall', 'installPolicy'] as const;
export type AuthoredSection = (typeof AUTHORED_SECTIONS)[number];

export interface TemplateVersion {
  id: string; templateId: string; version: number;
  /** The frozen agent snapshot and the unsectioned fields (service.ts `VersionContent`). */
  content: Json;
  envContract: Record<string, EnvVar> | null; changelog: string | null; sourceAgentVersion: number | null;
  sections: Record<AuthoredSection, Json | null>;
  /** Digest of `content` (the version's `contentHash`). */
  contentHash: string;
  /** The install seal (the manifest's `contentHash`). */
  manifestSeal: string;
  approvalStatus: ApprovalStatus; approvalNotes: string | null; approvedBy: string | null; approvedAt: Date | null;
  deprecated: boolean; deprecatedReason: string | null; deprecatedBy: string | null; deprecatedAt: Date | null;
  warnings: string[] | null; referenceEvalRunId: string | null; createdBy: string; createdAt: Date;
}

export interface EnvVar { description: string; required: boolean; example?: string }

export interface Review {
  id: string; templateId: string; kind: 'visibility' | 'version'; version: number | null; visibility: Visibility | null;
  status: ApprovalStatus; requestedBy: string; requestedAt: Date; decidedBy: string | null; decidedAt: Date | null; notes: string | null;
}

/** The source agent as the kernel's agents table holds it. */
export interface SourceAgent { id: string; orgId: string; name: string; version: string | null; baseAgent: boolean }

interface TemplateRow {
  id: string; name: string; display_name: string; description: string; creator_id: string; creator_org_id: string;
  source_agent_id: string | null; source_base_agent_id: string | null; visibility: Visibility; pending_visibility: Visibility | null;
  listed: boolean; first_party: boolean; latest_version: number; latest_approved_version: number | null;
  install_count: number; active_install_count: number; created_at: Date | string; updated_at: Date | string;
}

interface VersionRow {
  id: string; template_id: string; version: number; content: Json; env_contract: Record<string, EnvVar> | null; changelog: string | null;
  source_agent_version: number | null; connections: Json | null; persona_template: Json | null; trigger_presets: Json | null;
  params_meta: Json | null; on_install: Json | null; on_uninstall: Json | null; install_policy: Json | null;
  content_hash: string; manifest_seal: string; approval_status: ApprovalStatus; approval_notes: string | null; approved_by: string | null;
  approved_at: Date | string | null; deprecated: boolean; deprecated_reason: string | null; deprecated_by: string | null;
  deprecated_at: Date | string | null; warnings: string[] | null; reference_eval_run_id: string | null; created_by: string; created_at: Date | string;
}

const date = (v: Date | string): Date => new Date(v);
const maybeDate = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const TEMPLATE_COLUMNS = `t.id, t.name, t.display_name, t.description, t.creator_id, t.creator_org_id, t.source_agent_id, t.source_base_agent_id,
  t.visibility, t.pending_visibility, t.listed, t.first_party, t.latest_version, t.latest_approved_version, t.install_count,
  t.active_install_count, t.created_at, t.updated_at`;
const VERSION_COLUMNS = `id, template_id, version, content, env_contract, changelog, source_agent_version, connections, persona_template,
  trigger_presets, params_meta, on_install, on_uninstall, install_policy, content_hash, manifest_seal, approval_status, approval_notes,
  approved_by, approved_at, deprecated, deprecated_reason, deprecated_by, deprecated_at, warnings, reference_eval_run_id, created_by, created_at`;

/** Section name and its column. */
const SECTION_COLUMNS: Record<AuthoredSection, keyof VersionRow> = {
  connections: 'connections', personaTemplate: 'persona_template', triggerPresets: 'trigger_presets', paramsMeta: 'params_meta',
  onInstall: 'on_install', onUninstall: 'on_uninstall', installPolicy: 'install_policy',
};

const templateOf = (r: TemplateRow): Template => ({
  id: r.id, name: r.name, displayName: r.display_name, description: r.description, creatorId: r.creator_id, creatorOrgId: r.creator_org_id,
  sourceAgentId: r.source_agent_id, sourceBaseAgentId: r.source_base_agent_id, visibility: r.visibility, pendingVisibility: r.pending_visibility,
  listed: r.listed, firstParty: r.first_party, latestVersion: Number(r.latest_version),
  latestApprovedVersion: r.latest_approved_version === null ? null : Number(r.latest_approved_version),
  installCount: Number(r.install_count), activeInstallCount: Number(r.active_install_count), createdAt: date(r.created_at), updatedAt: date(r.updated_at),
});

const versionOf = (r: VersionRow): TemplateVersion => ({
  id: r.id, templateId: r.template_id, version: Number(r.version), content: r.content, envContract: r.env_contract, changelog: r.changelog,
  sourceAgentVersion: r.source_agent_version === null ? null : Number(r.source_agent_version),
  sections: Object.fromEntries(Object.entries(SECTION_COLUMNS).map(([s, c]) => [s, r[c] as Json | null])) as Record<AuthoredSection, Json | null>,
  contentHash: r.content_hash, manifestSeal: r.manifest_seal, approvalStatus: r.approval_status, approvalNotes: r.approval_notes,
  approvedBy: r.approved_by, approvedAt: maybeDate(r.approved_at), deprecated: r.deprecated, deprecatedReason: r.deprecated_reason,
  deprecatedBy: r.deprecated_by, deprecatedAt: maybeDate(r.deprecated_at), warnings: r.warnings, referenceEvalRunId: r.reference_eval_run_id,
  createdBy: r.created_by, createdAt: date(r.created_at),
});

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/** The visibility condition on `t`: public, or of one of the organizations at parameter `$n`. */
const visibleAt = (n: number): string => `(t.visibility = 'public' or t.creator_org_id = any($${n}::text[]))`;

/** Postgres' unique_violation on the named constraint or index. */
export const isUniqueViolation = (e: unknown, name: string): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: string }).code === '23505' && String((e as { message?: string }).message ?? '').includes(name);

export interface CatalogFilters { firstParty?: boolean | undefined }

export function createTemplatesRepo(sql: Sql) {
  return {
    /** An agent of the kernel's table (the source of a template). */
    async agent(id: string): Promise<SourceAgent | undefined> {
      const rows = await sql.query<{ id: string; org_id: string; name: string; version: string | null; base_agent: boolean }>(
        'select id, org_id, name, version, base_agent from agents where id = $1', [id]);
      const r = rows[0];
      return r && { id: r.id, orgId: r.org_id, name: r.name, version: r.version, baseAgent: r.base_agent };
    },

    /** The template when `orgIds` may see it. `lock`: held until the transaction ends (a mutation's read). */
    async visible(id: string, orgIds: readonly string[], lock = false): Promise<Template | undefined> {
      const rows = await sql.query<TemplateRow>(`select ${TEMPLATE_COLUMNS} from templates t where t.id = $1 and ${visibleAt(2)}${lock ? ' for update' : ''}`, [id, orgIds]);
      return rows[0] && templateOf(rows[0]);
    },

    async insert(t: Template): Promise<void> {
      await sql.query(
        `insert into templates (id, name, display_name, description, creator_id, creator_org_id, source_agent_id, source_base_agent_id,
           visibility, pending_visibility, listed, first_party, latest_version, latest_approved_version, install_count, active_install_count, created_at, updated_at)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)`,
        [t.id, t.name, t.displayName, t.description, t.creatorId, t.creatorOrgId, t.sourceAgentId, t.sourceBaseAgentId, t.visibility,
          t.pendingVisibility, t.listed, t.firstParty, t.latestVersion, t.latestApprovedVersion, t.installCount, t.activeInstallCount,
          t.createdAt.toISOString(), t.updatedAt.toISOString()],
      );
    },

    /** Sets the given fields and `updated_at`; the template as it is now. */
    async update(id: string, fields: Partial<Pick<Template, 'displayName' | 'description' | 'visibility' | 'pendingVisibility' | 'listed' | 'creatorOrgId' | 'latestVersion' | 'latestApprovedVersion'>>, at: Date): Promise<Template> {
      const columns: Record<string, string> = {
        displayName: 'display_name', description: 'description', visibility: 'visibility', pendingVisibility: 'pending_visibility', listed: 'listed',
        creatorOrgId: 'creator_org_id', latestVersion: 'latest_version', latestApprovedVersion: 'latest_approved_version',
      };
      const names = Object.keys(fields).filter((k) => (fields as Record<string, unknown>)[k] !== undefined);
      const sets = names.map((k, i) => `${columns[k]} = $${i + 2}`);
      const rows = await sql.query<TemplateRow>(
        `update templates t set ${[...sets, `updated_at = $${names.length + 2}`].join(', ')} where t.id = $1 returning ${TEMPLATE_COLUMNS}`,
        [id, ...names.map((k) => (fields as Record<string, unknown>)[k]), at.toISOString()],
      );
      return templateOf(rows[0]!);
    },

    /** One page of the catalog (public listed templates, plus every template of `orgIds`), newest first, and how many there are. */
    async catalog(orgIds: readonly string[], f: CatalogFilters, page: { limit: number; offset: number }): Promise<{ templates: Template[]; total: number }> {
      const params: unknown[] = [orgIds];
      const conds = [`((t.visibility = 'public' and t.listed) or t.creator_org_id = any($1::text[]))`];
      if (f.firstParty !== undefined) {
        params.push(f.firstParty);
        conds.push(`t.first_party = $${params.length}`);
      }
      const where = conds.join(' and ');
      const [rows, count] = await Promise.all([
        sql.query<TemplateRow>(`select ${TEMPLATE_COLUMNS} from templates t where ${where} order by t.created_at desc, t.id desc limit $${params.length + 1} offset $${params.length + 2}`,
          [...params, page.limit, page.offset]),
        sql.query<{ n: number }>(`select count(*)::int as n from templates t where ${where}`, params),
      ]);
      return { templates: rows.map(templateOf), total: Number(count[0]!.n) };
    },

    async insertVersion(v: TemplateVersion): Promise<void> {
      await sql.query(
        `insert into template_versions (${VERSION_COLUMNS})
         values ($1,$2,$3,$4::jsonb,$5::jsonb,$6,$7,$8::jsonb,$9::jsonb,$10::jsonb,$11::jsonb,$12::jsonb,$13::jsonb,$14::jsonb,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25::jsonb,$26,$27,$28)`,
        [v.id, v.templateId, v.version, json(v.content), json(v.envContract), v.changelog, v.sourceAgentVersion,
          ...Object.keys(SECTION_COLUMNS).map((s) => json(v.sections[s as AuthoredSection])),
          v.contentHash, v.manifestSeal, v.approvalStatus, v.approvalNotes, v.approvedBy, v.approvedAt?.toISOString() ?? null,
          v.deprecated, v.deprecatedReason, v.deprecatedBy, v.deprecatedAt?.toISOString() ?? null, json(v.warnings), v.referenceEvalRunId,
          v.createdBy, v.createdAt.toISOString()],
      );
    },

    /** One version of a template, or undefined. */
    async version(templateId: string, version: number): Promise<TemplateVersion | undefined> {
      const rows = await sql.query<VersionRow>(`select ${VERSION_COLUMNS} from template_versions where template_id = $1 and version = $2`, [templateId, version]);
      return rows[0] && versionOf(rows[0]);
    },

    /** A page of a template's versions, newest first, and how many it has. */
    async versions(templateId: string, page: { limit: number; offset: number }): Promise<{ versions: TemplateVersion[]; total: number }> {
      const [rows, count] = await Promise.all([
        sql.query<VersionRow>(`select ${VERSION_COLUMNS} from template_versions where template_id = $1 order by version desc limit $2 offset $3`, [templateId, page.limit, page.offset]),
        sql.query<{ n: number }>('select count(*)::int as n from template_versions where template_id = $1', [templateId]),
      ]);
      return { versions: rows.map(versionOf), total: Number(count[0]!.n) };
    },

    /** Sets a version's approval and deprecation fields; the version as it is now. */
    async updateVersion(templateId: string, version: number, f: Partial<Pick<TemplateVersion, 'approvalStatus' | 'approvedBy' | 'approvedAt' | 'approvalNotes' | 'deprecated' | 'deprecatedReason' | 'deprecatedBy' | 'deprecatedAt'>>): Promise<TemplateVersion | undefined> {
      const columns: Record<string, string> = {
        approvalStatus: 'approval_status', approvedBy: 'approved_by', approvedAt: 'approved_at', approvalNotes: 'approval_notes',
        deprecated: 'deprecated', deprecatedReason: 'deprecated_reason', deprecatedBy: 'deprecated_by', deprecatedAt: 'deprecated_at',
      };
      const names = Object.keys(f).filter((k) => (f as Record<string, unknown>)[k] !== undefined);
      if (names.length === 0) return this.version(templateId, version);
      const values = names.map((k) => {
        const v = (f as Record<string, unknown>)[k];
        return v instanceof Date ? v.toISOString() : v;
      });
      const rows = await sql.query<VersionRow>(
        `update template_versions set ${names.map((k, i) => `${columns[k]} = $${i + 3}`).join(', ')} where template_id = $1 and version = $2 returning ${VERSION_COLUMNS}`,
        [templateId, version, ...values],
      );
      return rows[0] && versionOf(rows[0]);
    },

    async insertReview(r: Review): Promise<void> {
      await sql.query(
        `insert into template_reviews (id, template_id, kind, version, visibility, status, requested_by, requested_at, decided_by, decided_at, notes)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
        [r.id, r.templateId, r.kind, r.version, r.visibility, r.status, r.requestedBy, r.requestedAt.toISOString(), r.decidedBy, r.decidedAt?.toISOString() ?? null, r.notes],
      );
    },

    /** Counts installs with increments (never read, then written): exact under concurrent installs. */
    async countInstall(templateId: string, delta: { installs: number; active: number }, at: Date): Promise<void> {
      await sql.query(
        'update templates set install_count = install_count + $2, active_install_count = active_install_count + $3, updated_at = $4 where id = $1',
        [templateId, delta.installs, delta.active, at.toISOString()],
      );
    },
  };
}

export type TemplatesRepo = ReturnType<typeof createTemplatesRepo>;

/**
 * The marketplace skill tables, over `Sql` (the store's connection, or a unit
 * of work's transaction). Visibility is part of every read: a skill is seen
 * when it is public or of one of the caller's organizations (`orgIds`);
 * anything else is not found.
 */
import type { Sql } from '../../store/sql.js';

export interface SourceSkill { id: string; orgId: string; name: string; description: string }

export interface Skill {
  id: string; name: string; displayName: string; description: string; longDescription: string | null; category: string | null;
  tags: string[]; creatorId: string; creatorOrgId: string | null; ownershipStatus: string; sourceSkillId: string;
  listed: boolean; visibility: 'public' | 'private'; verified: boolean; featured: boolean; published: boolean;
  installCount: number; activeInstallCount: number; iconUrl: string | null; screenshots: string[] | null;
  repositoryUrl: string | null; documentationUrl: string | null; listedAt: Date | null; createdAt: Date; updatedAt: Date;
}

export interface EnvVarMeta { description: string; required: boolean; example?: string }

export interface SkillVersion {
  id: string; skillId: string; version: string; description: string; changelog: string | null;
  envVarsMetadata: Record<string, EnvVarMeta> | null; approvalStatus: 'pending' | 'approved' | 'rejected'; published: boolean;
  approvedAt: Date | null; createdBy: string; createdAt: Date;
}

export interface Install { skillId: string; agentId: string; orgId: string; version: string; installedAt: Date }

export interface SearchFilters {
  listed?: boolean | undefined; verified?: boolean | undefined; featured?: boolean | undefined; hasPublishedVersion?: boolean | undefined;
  category?: string | undefined; search?: string | undefined; name?: string | undefined; creatorId?: string | undefined;
}

interface SkillRow {
  id: string; name: string; display_name: string; description: string; long_description: string | null; category: string | null;
  tags: string[]; creator_id: string; creator_org_id: string | null; ownership_status: string; source_skill_id: string;
  listed: boolean; visibility: 'public' | 'private'; verified: boolean; featured: boolean; published: boolean;
  install_count: number; active_install_count: number; icon_url: string | null; screenshots: string[] | null;
  repository_url: string | null; documentation_url: string | null; listed_at: Date | string | null; created_at: Date | string; updated_at: Date | string;
}

interface VersionRow {
  id: string; skill_id: string; version: string; description: string; changelog: string | null; env_vars_metadata: Record<string, EnvVarMeta> | null;
  approval_status: SkillVersion['approvalStatus']; published: boolean; approved_at: Date | string | null; created_by: string; created_at: Date | string;
}

interface InstallRow { skill_id: string; agent_id: string; org_id: string; version: string; installed_at: Date | string }

const date = (v: Date | string): Date => new Date(v);

/** A skill's columns; `published` is derived: the skill has a published version. */
const SKILL_COLUMNS = `s.id, s.name, s.display_name, s.description, s.long_description, s.category, s.tags, s.creator_id, s.creator_org_id,
  s.ownership_status, s.source_skill_id, s.listed, s.visibility, s.verified, s.featured,
  exists (select 1 from skills_versions pv where pv.skill_id = s.id and pv.published) as published,
  s.install_count, s.active_install_count, s.icon_url, s.screenshots, s.repository_url, s.documentation_url, s.listed_at, s.created_at, s.updated_at`;
const VERSION_COLUMNS = 'id, skill_id, version, description, changelog, env_vars_metadata, approval_status, published, approved_at, created_by, created_at';
const INSTALL_COLUMNS = 'skill_id, agent_id, org_id, version, installed_at';

const skillOf = (r: SkillRow): Skill => ({
  id: r.id, name: r.name, displayName: r.display_name, description: r.description, longDescription: r.long_description, category: r.category,
  tags: r.tags ?? [], creatorId: r.creator_id, creatorOrgId: r.creator_org_id, ownershipStatus: r.ownership_status, sourceSkillId: r.source_skill_id,
  listed: r.listed, visibility: r.visibility, verified: r.verified, featured: r.featured, published: r.published,
  installCount: Number(r.install_count), activeInstallCount: Number(r.active_install_count), iconUrl: r.icon_url, screenshots: r.screenshots,
  repositoryUrl: r.repository_url, documentationUrl: r.documentation_url, listedAt: r.listed_at === null ? null : date(r.listed_at),
  createdAt: date(r.created_at), updatedAt: date(r.updated_at),
});

const versionOf = (r: VersionRow): SkillVersion => ({
  id: r.id, skillId: r.skill_id, version: r.version, description: r.description, changelog: r.changelog, envVarsMetadata: r.env_vars_metadata,
  approvalStatus: r.approval_status, published: r.published, approvedAt: r.approved_at === null ? null : date(r.approved_at),
  createdBy: r.created_by, createdAt: date(r.created_at),
});

const installOf = (r: InstallRow): Install => ({ skillId: r.skill_id, agentId: r.agent_id, orgId: r.org_id, version: r.version, installedAt: date(r.installed_at) });

/** `text` as an ILIKE pattern matching it anywhere, taken literally: `%`, `_` and the escape `\` escaped. */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Postgres' unique_violation on the named constraint or index. */
const isUniqueViolation = (e: unknown, name: string): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: string }).code === '23505' && String((e as { message?: string }).message ?? '').includes(name);

/** `e` is the refusal of a second listing of one source skill (insert). */
export const isSourceListed = (e: unknown): boolean => isUniqueViolation(e, 'skills_source_skill_id_key');

/** `e` is the refusal of a version string the skill has already (insertVersion). */
export const isVersionTaken = (e: unknown): boolean => isUniqueViolation(e, 'skills_versions_skill_id_version_key');

/** The visibility condition on `s`: public, or of one of the organizations at parameter `$n`. */
const visibleAt = (n: number): string => `(s.visibility = 'public' or s.creator_org_id = any($${n}::text[]))`;

/**
 * The search statement: the visible skills matching `f`, newest first, one page of them and the
 * number matching. Exported so a test can EXPLAIN it (the trigram index serves `search`).
 */
export function searchStatement(orgIds: readonly string[], f: SearchFilters, page: { limit: number; offset: number }): { where: string; params: unknown[]; page: string; count: string } {
  const params: unknown[] = [orgIds];
  const conds = [visibleAt(1)];
  const add = (cond: (n: number) => string, value: unknown) => {
    params.push(value);
    conds.push(cond(params.length));
  };
  if (f.listed !== undefined) add((n) => `s.listed = $${n}`, f.listed);
  if (f.verified !== undefined) add((n) => `s.verified = $${n}`, f.verified);
  if (f.featured !== undefined) add((n) => `s.featured = $${n}`, f.featured);
  if (f.hasPublishedVersion !== undefined) {
    add((n) => `exists (select 1 from skills_versions pv where pv.skill_id = s.id and pv.published) = $${n}`, f.hasPublishedVersion);
  }
  if (f.category !== undefined) add((n) => `s.category = $${n}`, f.category);
  if (f.name !== undefined) add((n) => `s.name = $${n}`, f.name);
  if (f.creatorId !== undefined) add((n) => `s.creator_id = $${n}`, f.creatorId);
  if (f.search !== undefined) {
    // The indexed expression (skills/001 skills_search_trgm), word for word: the trigram index serves it.
    add((n) => `skills_search_text(s.name, s.display_name, s.description) ilike $${n}`, containsPattern(f.search));
  }
  const where = conds.join(' and ');
  const limitAt = params.length + 1;
  return {
    where,
    params,
    page: `select ${SKILL_COLUMNS} from skills s where ${where} order by s.created_at desc, s.id desc limit $${limitAt} offset $${limitAt + 1}`,
    count: `select count(*)::int as n from skills s where ${where}`,
  };
}

export function createSkillsRepo(sql: Sql) {
  return {
    async source(id: string): Promise<SourceSkill | undefined> {
      const rows = await sql.query<{ id: string; org_id: string; name: string; description: string }>('select id, org_id, name, description from skills_sources where id = $1', [id]);
      const r = rows[0];
      return r && { id: r.id, orgId: r.org_id, name: r.name, description: r.description };
    },

    async upsertSources(sources: readonly SourceSkill[]): Promise<void> {
      for (const s of sources) {
        await sql.query(
          `insert into skills_sources (id, org_id, name, description) values ($1, $2, $3, $4)
           on conflict (id) do update set org_id = excluded.org_id, name = excluded.name, description = excluded.description`,
          [s.id, s.orgId, s.name, s.description],
        );
      }
    },

    /** The skill when `orgIds` may see it. `lock`: held until the transaction ends (a mutation's read). */
    async visible(id: string, orgIds: readonly string[], lock = false): Promise<Skill | undefined> {
      const rows = await sql.query<SkillRow>(`select ${SKILL_COLUMNS} from skills s where s.id = $1 and ${visibleAt(2)}${lock ? ' for update' : ''}`, [id, orgIds]);
      return rows[0] && skillOf(rows[0]);
    },

    async insert(s: Omit<Skill, 'published' | 'installCount' | 'activeInstallCount' | 'ownershipStatus' | 'verified' | 'featured' | 'listed' | 'updatedAt'>): Promise<void> {
      await sql.query(
        `insert into skills (id, name, display_name, description, long_description, category, tags, creator_id, creator_org_id, source_skill_id,
           visibility, icon_url, screenshots, repository_url, documentation_url, listed_at, created_at, updated_at)
         values ($1,$2,$3,$4,$5,$6,$7::jsonb,$8,$9,$10,$11,$12,$13::jsonb,$14,$15,$16,$17,$17)`,
        [s.id, s.name, s.displayName, s.description, s.longDescription, s.category, JSON.stringify(s.tags), s.creatorId, s.creatorOrgId, s.sourceSkillId,
          s.visibility, s.iconUrl, s.screenshots === null ? null : JSON.stringify(s.screenshots), s.repositoryUrl, s.documentationUrl,
          s.listedAt?.toISOString() ?? null, s.createdAt.toISOString()],
      );
    },

    /** Sets the given columns (names from a fixed list in the service) and `updated_at`. */
    async update(id: string, columns: Record<string, unknown>, at: Date): Promise<void> {
      const names = Object.keys(columns);
      const sets = names.map((c, i) => `${c} = $${i + 2}${c === 'tags' || c === 'screenshots' ? '::jsonb' : ''}`);
      const values = names.map((c) => (c === 'tags' || c === 'screenshots') && columns[c] !== null ? JSON.stringify(columns[c]) : columns[c]);
      await sql.query(`update skills set ${[...sets, `updated_at = $${names.length + 2}`].join(', ')} where id = $1`, [id, ...values, at.toISOString()]);
    },

    async search(orgIds: readonly string[], f: SearchFilters, page: { limit: number; offset: number }): Promise<{ skills: Skill[]; total: number }> {
      const s = searchStatement(orgIds, f, page);
      const [rows, count] = await Promise.all([
        sql.query<SkillRow>(s.page, [...s.params, page.limit, page.offset]),
        sql.query<{ n: number }>(s.count, s.params),
      ]);
      return { skills: rows.map(skillOf), total: Number(count[0]!.n) };
    },

    /** Visible skills whose creator is `userId`, newest first. */
    async byCreator(userId: string, orgIds: readonly string[]): Promise<Skill[]> {
      const rows = await sql.query<SkillRow>(`select ${SKILL_COLUMNS} from skills s where s.creator_id = $2 and ${visibleAt(1)} order by s.created_at desc, s.id desc`, [orgIds, userId]);
      return rows.map(skillOf);
    },

    /** Visible skills of organization `orgId`, newest first. */
    async byOrg(orgId: string, orgIds: readonly string[]): Promise<Skill[]> {
      const rows = await sql.query<SkillRow>(`select ${SKILL_COLUMNS} from skills s where s.creator_org_id = $2 and ${visibleAt(1)} order by s.created_at desc, s.id desc`, [orgIds, orgId]);
      return rows.map(skillOf);
    },

    /** The versions of the skills, in no particular order. */
    async versionsOf(skillIds: readonly string[]): Promise<SkillVersion[]> {
      if (skillIds.length === 0) return [];
      return (await sql.query<VersionRow>(`select ${VERSION_COLUMNS} from skills_versions where skill_id = any($1::text[])`, [skillIds])).map(versionOf);
    },

    /** The listing of the source skill, if it is listed. */
    async listingOf(sourceSkillId: string): Promise<string | undefined> {
      return (await sql.query<{ id: string }>('select id from skills where source_skill_id = $1', [sourceSkillId]))[0]?.id;
    },

    /** Throws the unique violation (isVersionTaken) when the skill has the version string already. */
    async insertVersion(v: SkillVersion): Promise<void> {
      await sql.query(
        `insert into skills_versions (${VERSION_COLUMNS}) values ($1,$2,$3,$4,$5,$6::jsonb,$7,$8,$9,$10,$11)`,
        [v.id, v.skillId, v.version, v.description, v.changelog, v.envVarsMetadata === null ? null : JSON.stringify(v.envVarsMetadata), v.approvalStatus,
          v.published, v.approvedAt?.toISOString() ?? null, v.createdBy, v.createdAt.toISOString()],
      );
    },

    /** Sets one version's `published`; the version, or undefined when the skill has no such version. */
    async setPublished(skillId: string, by: { id: string } | { version: string }, published: boolean): Promise<SkillVersion | undefined> {
      const [col, value] = 'id' in by ? ['id', by.id] : ['version', by.version];
      const rows = await sql.query<VersionRow>(`update skills_versions set published = $3 where skill_id = $1 and ${col} = $2 returning ${VERSION_COLUMNS}`, [skillId, value, published]);
      return rows[0] && versionOf(rows[0]);
    },

    /** Unpublishes every published version of the skill; how many there were. */
    async unpublishAll(skillId: string): Promise<number> {
      return (await sql.query(`update skills_versions set published = false where skill_id = $1 and published returning id`, [skillId])).length;
    },

    async hasPublished(skillId: string): Promise<boolean> {
      return (await sql.query('select 1 from skills_versions where skill_id = $1 and published limit 1', [skillId])).length > 0;
    },

    /** Adds an install; false when the skill is installed on the agent already. */
    async insertInstall(i: Install, sealedEnv: string | null): Promise<boolean> {
      const rows = await sql.query(
        `insert into skills_installs (skill_id, agent_id, org_id, version, env_values, installed_at, updated_at) values ($1,$2,$3,$4,$5,$6,$6)
         on conflict (skill_id, agent_id) do nothing returning skill_id`,
        [i.skillId, i.agentId, i.orgId, i.version, sealedEnv, i.installedAt.toISOString()],
      );
      return rows.length > 0;
    },

    /** Counts installs with increments (never read, then written): exact under concurrent installs. */
    async countInstall(skillId: string, delta: { installs: number; active: number }, at: Date): Promise<void> {
      await sql.query(
        `update skills set install_count = install_count + $2, active_install_count = active_install_count + $3, updated_at = $4 where id = $1`,
        [skillId, delta.installs, delta.active, at.toISOString()],
      );
    },

    /** Updates an install's version and (when given) its sealed env values; undefined when not installed. */
    async updateInstall(skillId: string, agentId: string, version: string, sealedEnv: string | null | undefined, at: Date): Promise<Install | undefined> {
      const rows = await sql.query<InstallRow>(
        `update skills_installs set version = $3, env_values = case when $4::boolean then $5 else env_values end, updated_at = $6
         where skill_id = $1 and agent_id = $2 returning ${INSTALL_COLUMNS}`,
        [skillId, agentId, version, sealedEnv !== undefined, sealedEnv ?? null, at.toISOString()],
      );
      return rows[0] && installOf(rows[0]);
    },

    async deleteInstall(skillId: string, agentId: string): Promise<Install | undefined> {
      const rows = await sql.query<InstallRow>(`delete from skills_installs where skill_id = $1 and agent_id = $2 returning ${INSTALL_COLUMNS}`, [skillId, agentId]);
      return rows[0] && installOf(rows[0]);
    },

    async install(skillId: string, agentId: string): Promise<Install | undefined> {
      const rows = await sql.query<InstallRow>(`select ${INSTALL_COLUMNS} from skills_installs where skill_id = $1 and agent_id = $2`, [skillId, agentId]);
      return rows[0] && installOf(rows[0]);
    },

    /** The sealed env values of an install (for the skill's runtime; never answered). */
    async sealedEnv(skillId: string, agentId: string): Promise<string | null | undefined> {
      const rows = await sql.query<{ env_values: string | null }>('select env_values from skills_installs where skill_id = $1 and agent_id = $2', [skillId, agentId]);
      return rows[0]?.env_values;
    },

    /** The agent's installs, oldest first. */
    async installsOf(agentId: string): Promise<Install[]> {
      return (await sql.query<InstallRow>(`select ${INSTALL_COLUMNS} from skills_installs where agent_id = $1 order by installed_at, skill_id`, [agentId])).map(installOf);
    },
  };
}

export type SkillsRepo = ReturnType<typeof createSkillsRepo>;

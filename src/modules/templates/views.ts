/**
 * What the template routes answer, built from the stored rows: the template,
 * the version and the manifest (spec 03 part 2.5). Pure, so the install and
 * deploy routes answer the same objects.
 */
import type { Template, TemplateVersion } from './repository.js';
import type { Json } from './seal.js';
import type { ManifestOut, ReviewOut, TemplateOut, VersionOut } from './schemas.js';

const iso = (d: Date): string => d.toISOString();
/** Only the fields that have a value: the spec's optional fields are left out rather than null. */
export const present = <T extends Record<string, unknown>>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as T;

export const templateOut = (t: Template): TemplateOut => present({
  id: t.id, name: t.name, displayName: t.displayName, description: t.description, creatorId: t.creatorId, creatorOrgId: t.creatorOrgId,
  sourceAgentId: t.sourceAgentId ?? undefined, sourceBaseAgentId: t.sourceBaseAgentId ?? undefined, visibility: t.visibility, listed: t.listed,
  latestVersion: t.latestVersion, latestApprovedVersion: t.latestApprovedVersion ?? undefined, installCount: t.installCount,
  activeInstallCount: t.activeInstallCount, firstParty: t.firstParty, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt),
});

export const versionOut = (v: TemplateVersion): VersionOut => present({
  id: v.id, templateId: v.templateId, version: v.version, content: v.content, envContract: v.envContract ?? undefined, changelog: v.changelog ?? undefined,
  sourceAgentVersion: v.sourceAgentVersion ?? undefined, createdBy: v.createdBy, createdAt: iso(v.createdAt), contentHash: v.contentHash,
  approvalStatus: v.approvalStatus, approvalNotes: v.approvalNotes ?? undefined, ...v.sections, deprecated: v.deprecated,
  deprecatedReason: v.deprecatedReason ?? undefined, warnings: v.warnings ?? undefined,
});

/** The frozen content of a version (service.ts writes it; the manifest reads it). */
export interface VersionContent {
  agent: { name?: string; model?: string };
  declaredTriggers: Array<{ key: string; [k: string]: Json | undefined }>;
  marketplaceSkills: Array<{ skillId: string; version?: string }>;
  outcomes: Json | null;
  channels: Json | null;
  features: Json | null;
}

export const contentOf = (v: TemplateVersion): VersionContent => v.content as unknown as VersionContent;

interface ConnectionRequirement { key: string; type: string; required: boolean }

/**
 * The per-requirement reconciliation (contract templates): the embedded default holds no
 * connections, so a requirement is unmet, required or optional, with no candidates.
 */
export function reconciliationOf(v: TemplateVersion): Array<{ key: string; status: string; candidates: unknown[] }> {
  const reqs = (Array.isArray(v.sections.connections) ? v.sections.connections : []) as unknown as ConnectionRequirement[];
  return reqs.map((c) => ({ key: c.key, status: c.required ? 'unmet-required' : 'unmet-optional', candidates: [] }));
}

/**
 * The params a version declares: `paramsMeta` as a list; an object maps each key to its meta, listed
 * by key (the store keeps no member order).
 */
function paramsOf(meta: Json | null): Json[] {
  if (Array.isArray(meta)) return meta;
  if (meta !== null && typeof meta === 'object') {
    return Object.entries(meta).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, m]) => (m !== null && typeof m === 'object' && !Array.isArray(m) ? { ...m, key } : { key, value: m ?? null }));
  }
  return [];
}

/** The manifest of one version (spec 03 part 2.5); `contentHash` is the install seal. */
export function manifestOut(t: Template, v: TemplateVersion): ManifestOut {
  const c = contentOf(v);
  return present({
    id: t.id, name: t.name, displayName: t.displayName, description: t.description, version: v.version, latestVersion: t.latestVersion,
    visibility: t.visibility, contentHash: v.manifestSeal, agent: present({ model: c.agent?.model }),
    skills: c.marketplaceSkills ?? [], connections: (Array.isArray(v.sections.connections) ? v.sections.connections : []) as unknown[],
    triggers: c.declaredTriggers ?? [], params: paramsOf(v.sections.paramsMeta),
    personaTemplate: v.sections.personaTemplate ?? undefined, channels: c.channels ?? undefined, features: c.features ?? undefined,
    onInstall: v.sections.onInstall ?? undefined, onUninstall: v.sections.onUninstall ?? undefined, installPolicy: v.sections.installPolicy ?? undefined,
    latestApprovedVersion: t.latestApprovedVersion ?? undefined, installable: v.approvalStatus === 'approved' && !v.deprecated, deprecated: v.deprecated,
    reconciliation: reconciliationOf(v),
  });
}

/** The review route's answer: the template's visibility and each version's approval, newest first. */
export const reviewOut = (t: Template, versions: readonly TemplateVersion[]): ReviewOut => present({
  templateId: t.id, visibility: t.visibility, latestApprovedVersion: t.latestApprovedVersion ?? undefined,
  versions: versions.map((v) => present({
    version: v.version, approvalStatus: v.approvalStatus, approvalNotes: v.approvalNotes ?? undefined, approvedBy: v.approvedBy ?? undefined,
    approvedAt: v.approvedAt ? iso(v.approvedAt) : undefined,
  })),
});

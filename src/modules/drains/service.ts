/**
 * Turns a validated create or PATCH body into a new drain or a patch,
 * applying the rules that need context: which types this deployment offers,
 * what endpoint each type accepts and whether it is signed (the destination
 * table, src/destinations/), content only with acknowledgement, agents only
 * of the organization.
 */
import { ulid } from 'ulid';
import type { Drain, DrainType } from '../../model/drain.js';
import type { DrainPatch } from '../../store/drains-repo.js';
import { generateSecret } from '../../security/webhook-secret.js';
import { isAllowedHost } from '../../security/ssrf-guard.js';
import type { Principal } from '../../api/kernel/auth.js';
import { DrainErrors, drainValidation } from './errors.js';
import type { DrainDeps } from './context.js';
import { last4 } from './read-form.js';
import { checkDrainEndpoint, type DrainInput } from './validate.js';
import { INITIAL_STATE } from '../../drains/lifecycle.js';
import { destinationOf, typesWhere } from '../../destinations/index.js';

export const MAX_DRAINS = { standard: 5, enterprise: 10 } as const;

/** scheme://host:port of an endpoint, the unit header values are given for; null when there is none. */
function originOf(endpoint: string | null): string | null {
  if (endpoint === null) return null;
  try {
    return new URL(endpoint).origin;
  } catch {
    return null;
  }
}

function checkTypeAvailable(deps: DrainDeps, type: DrainType): void {
  if (!deps.config.drains.typesEnabled.includes(type)) {
    throw DrainErrors.DRAIN_TYPE_UNAVAILABLE(`Drain type ${type} is not available yet.`, { field: 'type' });
  }
}

/** The endpoint a drain of `type` gets from this body, checked; undefined when the body does not set one. */
async function resolveEndpoint(deps: DrainDeps, type: DrainType, input: DrainInput, creating: boolean): Promise<string | undefined> {
  const rule = destinationOf(type).endpoint;
  if (rule.from === 'site') {
    if (input.endpoint !== undefined) {
      throw DrainErrors.DRAIN_ENDPOINT_NOT_ALLOWED(`${type} drains derive their endpoint from site.`, { field: 'endpoint' });
    }
    if (creating && !input.site) throw drainValidation('site', [`site is required for ${type}`]);
    return input.site ? rule.url(deps.config.drains, input.site) : undefined;
  }
  if (input.site !== undefined) throw drainValidation('site', [`site applies to ${typesWhere((d) => d.endpoint.from === 'site').join(', ')} only`]);
  if (input.endpoint === undefined) {
    if (creating) throw drainValidation('endpoint', [`endpoint is required for ${type}`]);
    return undefined;
  }
  const endpoint = await checkDrainEndpoint(input.endpoint, deps.config.endpointAllowHosts);
  if (rule.intakeHosts) {
    const intake = rule.intakeHosts(deps.config.drains);
    const host = new URL(endpoint).hostname.toLowerCase();
    const accepted = intake.some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h));
    if (!accepted && !isAllowedHost(host, deps.config.endpointAllowHosts)) {
      throw DrainErrors.DRAIN_ENDPOINT_NOT_ALLOWED(`${type} accepts only its intake hosts (${intake.join(', ')}).`, { field: 'endpoint' });
    }
  }
  return endpoint;
}

function checkSigningAndContent(type: DrainType, input: DrainInput): void {
  if (input.secret !== undefined && !destinationOf(type).signs) {
    throw drainValidation('secret', [`only ${typesWhere((d) => d.signs).join(', ')} drains are signed; other types authenticate with headers`]);
  }
  if (input.includeContent === true && input.includeContentAck !== true) {
    throw DrainErrors.DRAIN_CONTENT_ACK_REQUIRED('includeContent requires includeContentAck: true.', { field: 'includeContentAck' });
  }
}

async function checkAgents(deps: DrainDeps, orgId: string, input: DrainInput): Promise<void> {
  if (!Array.isArray(input.agents)) return;
  const outside = await deps.store.auth.agentsOutsideOrg(orgId, input.agents);
  if (outside.length > 0) {
    throw DrainErrors.DRAIN_AGENT_NOT_IN_ORG(`Agents outside the organization: ${outside.slice(0, 5).join(', ')}.`, { field: 'agents' });
  }
}

const sealHeaders = (deps: DrainDeps, headers: { name: string; value: string }[]) =>
  headers.map((h) => ({ name: h.name, value: deps.store.secretBox.seal(h.value), last4: last4(h.value) }));

export async function buildNewDrain(deps: DrainDeps, orgId: string, principal: Principal, input: DrainInput): Promise<{ drain: Drain; secret: string | undefined }> {
  if (!input.name) throw drainValidation('name', ['name is required']);
  if (!input.type) throw drainValidation('type', ['type is required']);
  const type = input.type;
  checkTypeAvailable(deps, type);
  checkSigningAndContent(type, input);
  const endpoint = await resolveEndpoint(deps, type, input, true);
  await checkAgents(deps, orgId, input);
  const org = await deps.store.auth.org(orgId);
  const max = MAX_DRAINS[org?.plan ?? 'standard'];
  if ((await deps.store.drains.countLive(orgId)) >= max) {
    throw DrainErrors.DRAIN_LIMIT_REACHED(`This organization already has ${max} drains, its limit.`);
  }
  const destination = destinationOf(type);
  const secret = destination.signs ? input.secret ?? generateSecret() : undefined;
  const now = new Date();
  const drain: Drain = {
    id: `drn_${ulid().toLowerCase()}`,
    orgId,
    name: input.name,
    type,
    endpoint: endpoint ?? null,
    site: input.site ?? null,
    format: destination.formats ? input.format ?? 'json' : 'json',
    headers: sealHeaders(deps, input.headers ?? []),
    secret: secret === undefined ? null : deps.store.secretBox.seal(secret),
    previousSecret: null,
    rotationStartedAt: null,
    rotationExpiresAt: null,
    selectors: {
      sources: input.sources ?? null,
      minSeverity: input.minSeverity ?? 'info',
      agents: input.agents ?? '*',
      environments: input.environments ?? ['production'],
      includeContent: input.includeContent ?? false,
    },
    sampling: input.sampling ?? null,
    redact: input.redact ?? null,
    scrubRules: input.scrubRules ?? null,
    state: INITIAL_STATE,
    pauseReason: null,
    verifiedAt: null,
    verification: null,
    version: 1,
    createdBy: { type: 'user', id: principal.userId },
    createdAt: now,
    updatedAt: now,
  };
  return { drain, secret };
}

export interface DrainChange {
  patch: DrainPatch;
  /** Names of the fields whose value changes (for the audit entry). */
  changed: string[];
  /** The endpoint moves: the drain waits for verification again (the `endpoint_changed` event). */
  endpointChanged: boolean;
}

export async function buildDrainPatch(deps: DrainDeps, drain: Drain, input: DrainInput): Promise<DrainChange> {
  checkSigningAndContent(drain.type, input);
  const endpoint = await resolveEndpoint(deps, drain.type, input, false);
  await checkAgents(deps, drain.orgId, input);
  const patch: DrainPatch = {};
  const changed: string[] = [];
  let endpointChanged = false;
  const set = <K extends keyof DrainPatch>(field: K, value: DrainPatch[K], current: unknown) => {
    if (JSON.stringify(value) === JSON.stringify(current)) return;
    patch[field] = value;
    changed.push(field);
  };
  if (input.name !== undefined) set('name', input.name, drain.name);
  if (input.site !== undefined) set('site', input.site, drain.site);
  if (endpoint !== undefined && endpoint !== drain.endpoint) {
    set('endpoint', endpoint, drain.endpoint);
    // Part 3: a new endpoint must prove ownership again (the route moves the drain by
    // `endpoint_changed`); records keep buffering meanwhile. The old endpoint's verification proves
    // nothing for the new one (a pause and resume, or the quota ladder's reset, would otherwise
    // deliver to it unverified).
    patch.verifiedAt = null;
    endpointChanged = true;
    // Write-only header values were given for the old destination (an Authorization for a log
    // vendor): they do not follow the drain to another origin unless given again with it.
    if (input.headers === undefined && drain.headers.length > 0 && originOf(endpoint) !== originOf(drain.endpoint)) {
      patch.headers = [];
      changed.push('headers');
    }
  }
  if (input.format !== undefined && destinationOf(drain.type).formats) set('format', input.format, drain.format);
  if (input.headers !== undefined) {
    patch.headers = sealHeaders(deps, input.headers);
    changed.push('headers');
  }
  if (input.secret !== undefined) {
    // A secret set directly replaces the current one and closes any rotation window.
    Object.assign(patch, { secret: deps.store.secretBox.seal(input.secret), previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null });
    changed.push('secret');
  }
  const selectors = { ...drain.selectors };
  if (input.sources !== undefined) selectors.sources = input.sources;
  if (input.minSeverity !== undefined) selectors.minSeverity = input.minSeverity;
  if (input.agents !== undefined) selectors.agents = input.agents;
  if (input.environments !== undefined) selectors.environments = input.environments;
  if (input.includeContent !== undefined) selectors.includeContent = input.includeContent;
  set('selectors', selectors, drain.selectors);
  if (input.sampling !== undefined) set('sampling', input.sampling, drain.sampling);
  if (input.redact !== undefined) set('redact', input.redact, drain.redact);
  if (input.scrubRules !== undefined) set('scrubRules', input.scrubRules, drain.scrubRules);
  return { patch, changed, endpointChanged };
}

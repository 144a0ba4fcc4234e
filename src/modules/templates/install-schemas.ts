/** The install routes' request and response schemas (TypeBox; enforced by the kernel, answers serialised through them). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';
import { TemplateParams } from './schemas.js';

export const INSTALL_LIMITS = { model: 200, keys: 100, key: 128, envValue: 4096, personaVar: 2000, accept: 200 } as const;

const AgentId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: 'agentId must be 1-128 letters, digits, _ or -' });
const Key = (name: string) => Type.String({ minLength: 1, maxLength: INSTALL_LIMITS.key, [RULE]: `${name} must be 1-${INSTALL_LIMITS.key} characters` });
const StringMap = (name: string, max: number) => Type.Record(Type.String({ minLength: 1, maxLength: INSTALL_LIMITS.key }), Type.String({ maxLength: max }), {
  maxProperties: INSTALL_LIMITS.keys, [RULE]: `${name} must map at most ${INSTALL_LIMITS.keys} names to strings of at most ${max} characters`,
});
const Flag = (name: string) => Type.Boolean({ [RULE]: `${name} must be a boolean` });
const Enum = <T extends string>(name: string, values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values], [RULE]: `${name} must be one of ${values.join(', ')}` });

/**
 * The install body (spec 03 part 4.4). It allows properties beyond these: the spec says unknown
 * fields, `skipEnvCheck` among them, are stripped rather than refused, so a client written against
 * a newer or older form of the body still installs; the handler keeps the known ones alone
 * (install-service.ts `knownInstallFields`), and a stripped field changes nothing.
 */
export const InstallBody = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 999_999_999, [RULE]: 'version must be a positive integer' })),
    contentHash: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', [RULE]: 'contentHash must be the manifest\'s seal: 64 lowercase hex characters' })),
    envValues: Type.Optional(StringMap('envValues', INSTALL_LIMITS.envValue)),
    connectionSelections: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: INSTALL_LIMITS.key }), Type.Object({ type: Key('connectionSelections type'), connectionId: Key('connectionSelections connectionId') }, { additionalProperties: false }), {
      maxProperties: INSTALL_LIMITS.keys, [RULE]: 'connectionSelections must map capability keys to {type, connectionId}',
    })),
    triggerOverrides: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: INSTALL_LIMITS.key }), Type.Object({
      enabled: Type.Optional(Flag('triggerOverrides enabled')), params: Type.Optional(Type.Unknown()), input: Type.Optional(Type.Unknown()),
    }, { additionalProperties: false }), { maxProperties: INSTALL_LIMITS.keys, [RULE]: 'triggerOverrides must map trigger keys to {enabled?, params?, input?}' })),
    personaVars: Type.Optional(StringMap('personaVars', INSTALL_LIMITS.personaVar)),
    editedPersona: Type.Optional(Type.Unsafe<string | Record<string, unknown>>({ anyOf: [{ type: 'string', maxLength: 100_000 }, { type: 'object' }], [RULE]: 'editedPersona must be a string or an object' })),
    overwritePersona: Type.Optional(Flag('overwritePersona')),
    allowCreatorUpdates: Type.Optional(Flag('allowCreatorUpdates')),
    acceptModifiedPrimitives: Type.Optional(Type.Array(Key('acceptModifiedPrimitives[]'), { maxItems: INSTALL_LIMITS.accept })),
    acceptWithdrawnParams: Type.Optional(Type.Array(Key('acceptWithdrawnParams[]'), { maxItems: INSTALL_LIMITS.accept })),
    migrateRuns: Type.Optional(Type.Object({
      strategy: Enum('migrateRuns.strategy', ['resume-on-new', 'cancel-and-reseed'] as const),
      keys: Type.Optional(Type.Array(Key('migrateRuns.keys[]'), { maxItems: INSTALL_LIMITS.keys })),
      onIncompatible: Type.Optional(Enum('migrateRuns.onIncompatible', ['leave', 'cancel'] as const)),
      reason: Type.Optional(Type.String({ maxLength: 2000, [RULE]: 'migrateRuns.reason must be at most 2000 characters' })),
      include: Type.Optional(Enum('migrateRuns.include', ['suspended', 'all'] as const)),
    }, { additionalProperties: false })),
    model: Type.Optional(Type.String({ maxLength: INSTALL_LIMITS.model, [RULE]: `model must be at most ${INSTALL_LIMITS.model} characters` })),
  },
  { additionalProperties: true, description: 'Unknown fields (skipEnvCheck among them) are accepted and stripped (spec 03 part 4.4)' },
);
export type InstallBody = Static<typeof InstallBody>;

export const InstallParams = Type.Object({ templateId: TemplateParams.properties.templateId, agentId: AgentId });
export type InstallParams = Static<typeof InstallParams>;
export const AgentParams = Type.Object({ agentId: AgentId });
export type AgentParams = Static<typeof AgentParams>;

export const UpdatePreviewQuery = Type.Object(
  { toVersion: Type.Optional(Type.String({ pattern: '^(?=\\d{1,9}$)0*[1-9]\\d*$', [RULE]: 'toVersion must be a positive integer' })) },
  { additionalProperties: false },
);
export type UpdatePreviewQuery = Static<typeof UpdatePreviewQuery>;

export const ConsentBody = Type.Object({ allowCreatorUpdates: Flag('allowCreatorUpdates') }, { additionalProperties: false });
export type ConsentBody = Static<typeof ConsentBody>;

export const RemoveQuery = Type.Object(
  { removeAgent: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], [RULE]: 'removeAgent must be true or false' })) },
  { additionalProperties: false },
);
export type RemoveQuery = Static<typeof RemoveQuery>;

// ---- answers ------------------------------------------------------------------------------

const Opt = <T extends TSchema>(s: T) => Type.Optional(s);
const Open = Type.Unknown();
const Str = Type.String();
const KeyReason = Type.Object({ key: Str, reason: Str }, { additionalProperties: false });
const HookError = Type.Object({ code: Str, message: Opt(Str) }, { additionalProperties: false });

export const InstallResultOut = Type.Object(
  {
    templateId: Str, agentId: Str, orgId: Str, installedVersion: Type.Integer(), appliedAgentVersion: Type.Union([Str, Type.Null()]),
    allowCreatorUpdates: Type.Boolean(), status: Str, lastError: Type.Union([Str, Type.Null()]), appliedBy: Str, appliedAt: Str, installedBy: Str,
    contentHash: Str, armedTriggers: Type.Array(Str), blockedTriggers: Type.Array(KeyReason), unwatchedTriggers: Type.Array(KeyReason),
    triggerEndpoints: Type.Array(Type.Object({ key: Str, url: Str }, { additionalProperties: false })), hiddenParamsCleared: Type.Array(Str),
    personaSkipped: Type.Boolean(), onInstallFired: Type.Boolean(), onInstall: Type.Object({ toolRan: Type.Boolean(), ok: Opt(Type.Boolean()) }, { additionalProperties: false }),
    onInstallDeferred: Opt(Type.Boolean()), onInstallWorkflowRunId: Opt(Str), onInstallError: Opt(HookError),
    migration: Opt(Type.Object({
      migrationIds: Type.Array(Str), counts: Type.Object({ resumed: Type.Integer(), cancelled: Type.Integer(), reseeded: Type.Integer(), left: Type.Integer() }, { additionalProperties: false }),
      skipped: Opt(Type.Array(Str)),
    }, { additionalProperties: false })),
  },
  { additionalProperties: false, description: 'An install result (spec 03 part 2.5); env values are never answered' },
);

const InstalledShort = {
  templateId: Str, displayName: Str, installedVersion: Type.Integer(), appliedAt: Str, installedBy: Opt(Str), status: Str,
};
export const InstalledShortOut = Type.Object(InstalledShort, { additionalProperties: false });
export const InstalledLongOut = Type.Object(
  {
    ...InstalledShort, latestApprovedVersion: Opt(Type.Integer()), updateAvailable: Type.Boolean(), allowCreatorUpdates: Type.Boolean(),
    lastError: Type.Union([Str, Type.Null()]), appliedBy: Opt(Str), updatePendingConsent: Opt(Type.Boolean()), bindings: Type.Array(Open),
    triggers: Type.Array(Type.Object({ key: Str, enabled: Type.Boolean(), params: Opt(Open), input: Opt(Open) }, { additionalProperties: false })),
    outcomes: Type.Array(Open), paramValues: Type.Record(Str, Open), params: Type.Array(Open),
    setup: Opt(Type.Object({ status: Str, error: Opt(Str), code: Opt(Str), workflowRunId: Opt(Str) }, { additionalProperties: false })),
    onInstallWorkflowRunId: Opt(Str), onInstallError: Opt(HookError),
  },
  { additionalProperties: false },
);

export const InstallAnswers = {
  result: InstallResultOut,
  short: Type.Array(InstalledShortOut),
  long: Type.Array(InstalledLongOut),
  longOne: InstalledLongOut,
  updatePreview: Type.Object({
    fromVersion: Type.Integer(), toVersion: Type.Integer(), changelog: Opt(Str), sections: Type.Array(Str),
    envContract: Type.Object({ added: Type.Array(Str), removed: Type.Array(Str), newlyRequired: Type.Array(Str) }, { additionalProperties: false }),
    consentSurfaceChanged: Type.Boolean(), codeChanged: Type.Boolean(),
    scopeDelta: Type.Object({ added: Type.Array(Str), removed: Type.Array(Str) }, { additionalProperties: false }),
    armedTriggersSurviving: Type.Array(Str), driftedPrimitives: Type.Array(Str), workflowRunsInFlight: Opt(Type.Integer()), droppedEditableParams: Opt(Type.Array(Str)),
  }, { additionalProperties: false }),
  setupRetry: Type.Object({
    onInstallFired: Opt(Type.Boolean()), onInstall: Opt(Type.Object({ toolRan: Type.Boolean(), ok: Opt(Type.Boolean()) }, { additionalProperties: false })),
    onInstallWorkflowRunId: Opt(Str), onInstallError: Opt(HookError),
    startWorkflow: Type.Object({ outcome: Str, runId: Opt(Str), error: Opt(HookError) }, { additionalProperties: false }),
  }, { additionalProperties: false }),
  removalPreview: Type.Object({
    agentId: Str, agentName: Str, minted: Type.Boolean(), soleInstall: Type.Boolean(),
    otherTemplates: Type.Array(Type.Object({ templateId: Str, displayName: Str }, { additionalProperties: false })),
    members: Type.Array(Open), memberTotal: Type.Integer(), workspaceRoleHolders: Type.Array(Open), workspaceRoleHolderTotal: Type.Integer(),
    rooms: Type.Array(Open), roomTotal: Type.Integer(), automations: Type.Array(Open), connections: Type.Array(Open), billing: Open, warnings: Type.Array(Str),
  }, { additionalProperties: false }),
  removed: Type.Object({
    success: Type.Boolean(), onUninstall: Opt(Type.Object({ ran: Type.Boolean(), ok: Opt(Type.Boolean()), error: Opt(Str) }, { additionalProperties: false })),
    agentRemoved: Opt(Type.Boolean()),
  }, { additionalProperties: false }),
};

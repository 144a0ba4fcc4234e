/** The deploy routes' request and answer schemas (TypeBox; enforced by the kernel, answers serialised through them). */
import { Type, type Static } from '@sinclair/typebox';
import { RULE } from '../../api/kernel/schema.js';

export const DEPLOY_LIMITS = { agentDisplayName: 120, model: 200, key: { min: 16, max: 128 } } as const;

const ID = (name: string) => Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', [RULE]: `${name} must be 1-128 letters, digits, _ or -` });
const KEY_PATTERN = `^[A-Za-z0-9_-]{${DEPLOY_LIMITS.key.min},${DEPLOY_LIMITS.key.max}}$`;
const KEY_RULE = `must be ${DEPLOY_LIMITS.key.min}-${DEPLOY_LIMITS.key.max} letters, digits, _ or -`;
const Obj = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });
const Strings = (name: string) => Type.Array(Type.String({ maxLength: 512 }), { maxItems: 500, [RULE]: `${name} must be an array of at most 500 strings` });

/**
 * The deploy body (spec 03 part 4.4): the install fields, `agentDisplayName` and `orgId`. Fields it
 * does not name (`skipEnvCheck` among them) are accepted and ignored.
 */
export const DeployBody = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, [RULE]: 'version must be an integer from 1' })),
    contentHash: Type.Optional(Type.String({ maxLength: 128, [RULE]: 'contentHash must be a string of at most 128 characters' })),
    envValues: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { [RULE]: 'envValues must map names to strings of at most 8192 characters' })),
    connectionSelections: Type.Optional(Obj('capability key to {type, connectionId}')),
    triggerOverrides: Type.Optional(Obj('trigger key to {enabled?, params?, input?}')),
    personaVars: Type.Optional(Obj('persona template variables')),
    editedPersona: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Obj('persona object')], { [RULE]: 'editedPersona must be a string or an object' })),
    overwritePersona: Type.Optional(Type.Boolean({ [RULE]: 'overwritePersona must be a boolean' })),
    allowCreatorUpdates: Type.Optional(Type.Boolean({ [RULE]: 'allowCreatorUpdates must be a boolean' })),
    acceptModifiedPrimitives: Type.Optional(Strings('acceptModifiedPrimitives')),
    acceptWithdrawnParams: Type.Optional(Strings('acceptWithdrawnParams')),
    migrateRuns: Type.Optional(Obj('{strategy, keys?, onIncompatible?, reason?, include?}')),
    model: Type.Optional(Type.String({ maxLength: DEPLOY_LIMITS.model, [RULE]: `model must be at most ${DEPLOY_LIMITS.model} characters` })),
    agentDisplayName: Type.Optional(Type.String({ minLength: 1, maxLength: DEPLOY_LIMITS.agentDisplayName, [RULE]: `agentDisplayName must be 1-${DEPLOY_LIMITS.agentDisplayName} characters` })),
    orgId: Type.Optional(ID('orgId')),
  },
  { additionalProperties: true },
);
export type DeployBody = Static<typeof DeployBody>;

export const DeployHeaders = Type.Object({
  'idempotency-key': Type.String({ pattern: KEY_PATTERN, [RULE]: `Idempotency-Key is required and ${KEY_RULE}` }),
});
export type DeployHeaders = Static<typeof DeployHeaders>;

export const TemplateParams = Type.Object({ templateId: ID('templateId') });
export type TemplateParams = Static<typeof TemplateParams>;
export const DeployParams = Type.Object({ deployId: ID('deployId') });
export type DeployParams = Static<typeof DeployParams>;

export const SessionQuery = Type.Object({
  version: Type.Optional(Type.String({ pattern: '^(?=\\d{1,9}$)0*[1-9]\\d*$', [RULE]: 'version must be an integer from 1' })),
});
export type SessionQuery = Static<typeof SessionQuery>;

export const SessionBody = Type.Object(
  {
    answers: Type.Optional(Obj('answers so far; deep-merged into the session')),
    connectState: Type.Optional(Obj('connection progress; deep-merged into the session')),
    idempotencyKey: Type.Optional(Type.Union([Type.String({ pattern: KEY_PATTERN }), Type.Null()], { [RULE]: `idempotencyKey ${KEY_RULE}, or null` })),
  },
  { additionalProperties: true },
);
export type SessionBody = Static<typeof SessionBody>;

export const MineQuery = Type.Object({ orgId: ID('orgId') });
export type MineQuery = Static<typeof MineQuery>;

// ---- answers ------------------------------------------------------------------------------

const Nullable = (s: ReturnType<typeof Type.String>) => Type.Union([s, Type.Null()]);
const Any = Type.Unknown();

export const DeployResult = Type.Object(
  {
    deployId: Type.String(), agentId: Type.String(), orgId: Type.String(), agentVersion: Any, status: Any,
    armedTriggers: Any, triggerEndpoints: Any, blockedTriggers: Any, unwatchedTriggers: Any, personaSkipped: Any,
    lastError: Any, hiddenParamsCleared: Any, onInstallFired: Any, onInstall: Any, onInstallWorkflowRunId: Any, onInstallError: Any,
  },
  { additionalProperties: false, description: 'The deploy result (spec 03 part 2.5), with its deployId' },
);

/** The templates envelope of a refused deploy, with the deploy's id. */
export const DeployRefusal = Type.Object(
  { deployId: Type.Optional(Type.String()), code: Type.String(), message: Type.String() },
  { additionalProperties: true, description: 'The templates error envelope {code, message, ...fields}' },
);

export const DeployAnswers = {
  created: DeployResult,
  accepted: Type.Object({ deployId: Type.String() }, { additionalProperties: false }),
  poll: Type.Object(
    {
      deployId: Type.String(), status: Type.String(), stage: Type.Optional(Type.String()),
      result: Type.Optional(DeployResult), error: Type.Optional(DeployRefusal),
    },
    { additionalProperties: false },
  ),
  session: Type.Object(
    {
      session: Type.Object({
        templateId: Type.String(), version: Type.Integer(), answers: Obj('answers'), connectState: Obj('connectState'),
        idempotencyKey: Nullable(Type.String()), updatedAt: Nullable(Type.String()),
      }, { additionalProperties: false }),
      copy: Type.Object({ title: Type.String(), description: Type.String(), version: Type.Integer() }, { additionalProperties: false }),
    },
    { additionalProperties: false },
  ),
  targets: Type.Array(Type.Object(
    { agentId: Type.String(), name: Type.String(), orgId: Type.String(), installable: Type.Boolean(), reason: Type.Optional(Type.String()) },
    { additionalProperties: false },
  )),
  mine: Type.Array(Type.Unknown()),
};

/**
 * The template service's reads that installs and deploys build on (service.ts): which version a
 * new install or deploy takes (asked, latest, latest approved; deprecated refused), the seal
 * check, the env contract, visibility, on both stores. The routes reach them through the install
 * and deploy families' calls; here they are called as those do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../../src/store/store.js';
import { familyMigrations } from '../../../../src/modules/index.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { STORE_KINDS } from '../../../helpers/stores.js';
import { AppError } from '../../../../src/errors.js';
import type { Principal } from '../../../../src/api/kernel/auth.js';
import { createTemplatesService, type Reviewer, type TemplatesService } from '../../../../src/modules/templates/service.js';
import type { Template } from '../../../../src/modules/templates/repository.js';

const person = (userId: string): Principal => ({ kind: 'session', userId, keyOrgId: undefined, scopes: null, agentGrants: [], credentialId: `ses_${userId}` });
const ANN = person('usr_ann');
const GUS = person('usr_gus');

/** The AppError `fn` throws (or fails the test). */
async function refusal(fn: () => unknown): Promise<AppError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe.each(STORE_KINDS.map((k) => k.name))('template service reads on %s', (kind) => {
  let store: Store;
  let db: TestDatabase | undefined;
  let service: TemplatesService;
  let t: Template;
  const reviews: Array<'approved' | 'pending'> = [];
  // A reviewer that decides as the test says: the embedded default approves at once.
  const reviewer: Reviewer = () => ({ status: reviews.shift() ?? 'approved' });

  beforeAll(async () => {
    if (kind === 'postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 2, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await store.sql.query("insert into orgs (id, name) values ('org_acme', 'Acme'), ('org_globex', 'Globex')");
    await store.sql.query("insert into users (id, email) values ('usr_ann', 'ann@acme.test'), ('usr_gus', 'gus@globex.test')");
    await store.sql.query("insert into memberships (user_id, org_id, role) values ('usr_ann', 'org_acme', 'admin'), ('usr_gus', 'org_globex', 'admin')");
    await store.sql.query("insert into agents (id, org_id, name, visibility, version, base_agent) values ('agt_base', 'org_acme', 'base-bot', 'org', '7', true)");
    service = createTemplatesService({ store, reviewer });
    t = await service.create(ANN, { sourceAgentId: 'agt_base', name: 'support', displayName: 'Support' });
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('refuses a template with no version: 404 TEMPLATE_NO_VERSION', async () => {
    const e = await refusal(() => service.installableVersion(t, undefined, 'latest'));
    expect([e.statusCode, e.code]).toEqual([404, 'TEMPLATE_NO_VERSION']);
  });

  it('takes the version asked for, else the latest (install) or the latest approved, else the latest (deploy)', async () => {
    await service.publish(ANN, t.id, { envContract: { TOKEN: { description: 'token', required: true }, REGION: { description: 'region', required: false } } });
    reviews.push('pending');
    await service.publish(ANN, t.id, { changelog: 'awaiting review' });
    t = await service.visibleTemplate(ANN, t.id);
    expect([t.latestVersion, t.latestApprovedVersion]).toEqual([2, 1]);
    expect((await service.installableVersion(t, undefined, 'latest')).version).toBe(2);
    expect((await service.installableVersion(t, undefined, 'latestApproved')).version).toBe(1);
    expect((await service.installableVersion(t, 1, 'latest')).version).toBe(1);
    const unknown = await refusal(() => service.installableVersion(t, 5, 'latest'));
    expect([unknown.statusCode, unknown.code, unknown.details]).toEqual([404, 'TEMPLATE_VERSION_NOT_FOUND', { version: 5 }]);
    // Inside a unit of work (the install's own transaction), on its connection.
    const inTx = await store.unitOfWork((tx) => service.installableVersion(t, 2, 'latest', tx.sql));
    expect(inTx.approvalStatus).toBe('pending');
  });

  it('refuses a deprecated version, only that one (409 TEMPLATE_VERSION_DEPRECATED with the reason)', async () => {
    await service.deprecate(ANN, t.id, 1, 'old CRM');
    const e = await refusal(() => service.installableVersion(t, 1, 'latest'));
    expect([e.statusCode, e.code, e.details]).toEqual([409, 'TEMPLATE_VERSION_DEPRECATED', { reason: 'old CRM' }]);
    // The deploy default lands on the deprecated latest approved version: refused, not silently moved.
    expect((await refusal(() => service.installableVersion(t, undefined, 'latestApproved'))).code).toBe('TEMPLATE_VERSION_DEPRECATED');
    expect((await service.installableVersion(t, 2, 'latest')).deprecated).toBe(false);
  });

  it('checks a sent seal against the version\'s install seal; an omitted one is not checked', async () => {
    const v2 = await service.readVersion(t.id, 2);
    expect(() => service.checkSeal(v2, undefined)).not.toThrow();
    expect(() => service.checkSeal(v2, v2.manifestSeal)).not.toThrow();
    const v1 = await service.readVersion(t.id, 1);
    for (const sent of [v1.manifestSeal, v2.contentHash, v2.manifestSeal.toUpperCase(), '']) {
      let thrown: unknown;
      try {
        service.checkSeal(v2, sent);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, sent).toBeInstanceOf(AppError);
      expect((thrown as AppError).code).toBe('CONTENT_HASH_MISMATCH');
      expect((thrown as AppError).statusCode).toBe(409);
    }
  });

  it('requires a value for each required env variable (400 ENV_VALUE_REQUIRED naming it); optional ones may be left out', async () => {
    const v1 = await service.readVersion(t.id, 1);
    expect(() => service.requireEnv(v1, { TOKEN: 'tok' })).not.toThrow();
    for (const values of [undefined, {}, { REGION: 'eu' }, { TOKEN: '' }]) {
      let thrown: unknown;
      try {
        service.requireEnv(v1, values);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(values)).toBeInstanceOf(AppError);
      expect([(thrown as AppError).statusCode, (thrown as AppError).code, (thrown as AppError).details]).toEqual([400, 'ENV_VALUE_REQUIRED', { key: 'TOKEN' }]);
    }
    // A version without a contract requires nothing.
    expect(() => service.requireEnv({ ...v1, envContract: null }, undefined)).not.toThrow();
  });

  it('hides a private template from another organization (404) and reads a missing version as 404', async () => {
    expect((await refusal(() => service.visibleTemplate(GUS, t.id))).code).toBe('TEMPLATE_NOT_FOUND');
    expect((await service.visibleTemplate(ANN, t.id)).id).toBe(t.id);
    expect((await refusal(() => service.readVersion(t.id, 9))).code).toBe('TEMPLATE_VERSION_NOT_FOUND');
    expect(await service.orgsOf(GUS)).toEqual(['org_globex']);
  });
});

/** Who an audit entry names: a typed key as itself, a person (a session, a legacy key) as the user. */
import { describe, expect, it } from 'vitest';
import { auditActorOf, type Principal } from '../../../src/api/kernel/auth.js';

const principal = (over: Partial<Principal>): Principal => ({
  kind: 'api_key', userId: 'usr_ann', keyOrgId: 'org_acme', scopes: ['logs:manage'], agentGrants: [], credentialId: 'key_0123456789abcdef', ...over,
});

describe('auditActorOf', () => {
  it('names a typed API key by its credential label, never its owner or token', () => {
    expect(auditActorOf(principal({}))).toEqual({ type: 'api_key', id: 'key_0123456789abcdef' });
  });
  it('names the user for a session and for a legacy key (it acts as its user)', () => {
    expect(auditActorOf(principal({ kind: 'session', keyOrgId: undefined, scopes: null, credentialId: 'ses_0123456789abcdef' }))).toEqual({ type: 'user', id: 'usr_ann' });
    expect(auditActorOf(principal({ scopes: null }))).toEqual({ type: 'user', id: 'usr_ann' });
  });
});

import { describe, expect, it } from 'vitest';
import { scopesSatisfy, SENSITIVE_SCOPES } from '../../../src/api/kernel/auth.js';
import { defineScopes, isCatalogued } from '../../../src/api/kernel/scopes.js';
// The families declare their scopes (logs:manage, logs:ingest) in the catalogue when they load.
import '../../../src/server.js';

describe('scopesSatisfy (spec 01 part 5)', () => {
  it('grants by exact name', () => {
    expect(scopesSatisfy(['logs:manage'], 'logs:manage')).toBe(true);
    expect(scopesSatisfy(['logs:read'], 'logs:manage')).toBe(false);
  });

  it('lets wildcards cover their area and action, except sensitive scopes', () => {
    expect(scopesSatisfy(['logs:*'], 'logs:read')).toBe(true);
    expect(scopesSatisfy(['*:read'], 'logs:read')).toBe(true);
    expect(scopesSatisfy(['agents:*'], 'agents:write')).toBe(true);
    expect(scopesSatisfy(['agents:*'], 'logs:read')).toBe(false);
    expect(scopesSatisfy(['logs:*'], 'logs:manage')).toBe(false);
    expect(scopesSatisfy(['*:read'], 'secrets:read')).toBe(false);
    expect(scopesSatisfy(['*'], 'logs:manage')).toBe(false);
    expect(scopesSatisfy(['platform:*'], 'platform:admin')).toBe(false);
    expect(scopesSatisfy(['platform:admin'], 'platform:admin')).toBe(true);
  });

  it('treats the spec list and the log scopes as sensitive', () => {
    for (const s of ['secrets:read', 'secrets:write', 'credits:grant', 'credits:deduct', 'billing:manage', 'negotiated-plans:write', 'telephony:provision', 'members:assign-role', 'api-keys:issue', 'tokens:mint', 'rights:assign', 'marketplace:review', 'promo-codes:manage', 'logs:manage', 'logs:ingest']) {
      expect(SENSITIVE_SCOPES.has(s), s).toBe(true);
      const [area] = s.split(':');
      expect(scopesSatisfy([`${area}:*`, '*:read', '*:write', '*:manage'], s), s).toBe(false);
    }
  });

  it('declares the shared automations and marketplace scopes once, as platform scopes no family may declare again, none sensitive', () => {
    for (const s of ['automations:read', 'automations:write', 'marketplace:read']) {
      expect(isCatalogued(s), s).toBe(true);
      expect(SENSITIVE_SCOPES.has(s), s).toBe(false);
      const [area, action] = s.split(':');
      expect(scopesSatisfy([`${area}:*`], s), s).toBe(true);
      expect(scopesSatisfy([`*:${action}`], s), s).toBe(true);
      expect(() => defineScopes('logs', { [s]: { description: 'again' } }), s).toThrow(/declared by platform already/);
    }
  });
});

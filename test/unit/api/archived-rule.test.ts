/**
 * What an archived organization is answered (kernel/archived.ts): a route's own declaration, else a
 * mutation refused and a read served.
 */
import { describe, expect, it } from 'vitest';
import { archivedOrgRuleOf, orgArchived } from '../../../src/api/kernel/archived.js';
import { renderError } from '../../../src/api/kernel/error-shapes.js';

describe('archived organization rule', () => {
  it('refuses every method but GET, HEAD and OPTIONS when the route declares nothing', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE', 'post']) expect(archivedOrgRuleOf(undefined, m)).toBe('refuse');
    for (const m of ['GET', 'HEAD', 'OPTIONS', 'get']) expect(archivedOrgRuleOf(undefined, m)).toBe('serve');
  });

  it('follows the route\'s declaration whatever the method', () => {
    expect(archivedOrgRuleOf('serve', 'POST')).toBe('serve');
    expect(archivedOrgRuleOf('refuse', 'GET')).toBe('refuse');
  });

  it('answers 423 ORG_ARCHIVED naming the organization, in spec 01\'s shape on telephony routes too', () => {
    const e = orgArchived('org_a');
    expect(e).toMatchObject({ statusCode: 423, code: 'ORG_ARCHIVED', details: { orgId: 'org_a' } });
    expect(renderError(e, 'telephony')).toEqual({ statusCode: 423, error: 'Locked', code: 'ORG_ARCHIVED', orgId: 'org_a', message: e.message });
    expect(renderError(e, 'workflows')).toEqual({ statusCode: 423, code: 'ORG_ARCHIVED', orgId: 'org_a', message: e.message });
  });
});

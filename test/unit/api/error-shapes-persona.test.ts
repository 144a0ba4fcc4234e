/**
 * The `persona` error shape (spec 03 part 7 over spec 01 part 7.1): the framework body for
 * validation and codeless not-found answers, 7.1.2 for permission denials with the persona
 * table's message, the conventions shape for every other code.
 */
import { describe, expect, it } from 'vitest';
import { defineErrors, KernelErrors } from '../../../src/api/kernel/error-registry.js';
import { renderError } from '../../../src/api/kernel/error-shapes.js';

const Probe = defineErrors('persona-shape-probe', {
  PROBE_CODELESS_NOT_FOUND: { status: 404, codeless: true, when: 'a probe' },
  PROBE_WITH_CODE: { status: 424, fields: ['reason'], when: 'a probe' },
});

describe('persona error shape', () => {
  it('answers validation in the framework shape, every failed rule in the message array', () => {
    const e = KernelErrors.VALIDATION_FAILED('persona is required; x', { field: 'persona', message: ['persona is required', 'x'] });
    expect(renderError(e, 'persona')).toEqual({ statusCode: 400, error: 'Bad Request', message: ['persona is required', 'x'] });
  });

  it('answers a codeless code with {statusCode, error, message} only', () => {
    expect(renderError(Probe.PROBE_CODELESS_NOT_FOUND('SubAgent not found', { extra: 1 }), 'persona')).toEqual({ statusCode: 404, error: 'Not Found', message: 'SubAgent not found' });
    // The same code elsewhere keeps its code.
    expect(renderError(Probe.PROBE_CODELESS_NOT_FOUND('SubAgent not found'))).toMatchObject({ code: 'PROBE_CODELESS_NOT_FOUND' });
  });

  it('answers a missing scope with spec 01 7.1.2 and the message "Insufficient permissions"', () => {
    const e = KernelErrors.INSUFFICIENT_SCOPE('This credential lacks the agents:read scope.', { resourceType: 'agent', resourceId: 'agt_1', requiredScope: 'agents:read' });
    expect(renderError(e, 'persona')).toEqual({
      statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', message: 'Insufficient permissions', resourceType: 'agent', resourceId: 'agt_1', requiredScope: 'agents:read',
    });
  });

  it('keeps the conventions shape for projection denials and the other codes', () => {
    const e = KernelErrors.RESOURCE_NOT_PROJECTED('The agent agt_1 is not visible to this credential.', { resourceType: 'agent', resourceId: 'agt_1', requiredScope: 'agents:read' });
    expect(renderError(e, 'persona')).toEqual(renderError(e, 'conventions'));
    const p = Probe.PROBE_WITH_CODE('refused', { reason: 'content_refused' });
    expect(renderError(p, 'persona')).toEqual({ statusCode: 424, error: 'Failed Dependency', code: 'PROBE_WITH_CODE', message: 'refused', reason: 'content_refused' });
  });
});

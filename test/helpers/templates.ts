/** What the agent template suites share: their seed file (organizations, agents with a base agent, keys) and calls. */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApi } from './api-app.js';

export const TEMPLATES_SEED = new URL('../fixtures/seed-templates.json', import.meta.url).pathname;
export const TEMPLATES = '/marketplace/templates';

/**
 * The suites run with TRUST_PROXY=true and send each request from an address of its own (the
 * catalog's per-address budgets are not what most tests are about); `address` names one.
 */
export const TEMPLATES_ENV = { SEED_FILE: TEMPLATES_SEED, TRUST_PROXY: 'true' };

export const freshAddress = (): string => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 250)}`;

export function call(app: TestApi, method: string, path: string, opts: { token?: string; body?: unknown; address?: string; headers?: Record<string, string> } = {}) {
  return app.request(method, path, { token: opts.token, body: opts.body, headers: { 'x-forwarded-for': opts.address ?? freshAddress(), ...(opts.headers ?? {}) } });
}

/** Creates a template as `token` (201 expected). */
export async function createTemplate(app: TestApi, token: string, body: Record<string, unknown>): Promise<any> {
  const res = await call(app, 'POST', TEMPLATES, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Publishes the next version (201 expected). */
export async function publishVersion(app: TestApi, token: string, id: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await call(app, 'POST', `${TEMPLATES}/${id}/versions`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The framework shape of a 400 (spec 01 part 7.1.1): no code. */
export const badRequest = (message: unknown = expect.anything()) => ({ statusCode: 400, error: 'Bad Request', message });

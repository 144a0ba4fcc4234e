/** What the marketplace skill suites share: their seed file (organizations, agents, keys and source skills) and calls. */
import { expect } from 'vitest';
import type { TestApi } from './api-app.js';

export const SKILLS_SEED = new URL('../fixtures/seed-skills.json', import.meta.url).pathname;
export const SKILLS = '/marketplace/skills';

/** Lists a source skill as `token` (201 expected) and returns the marketplace skill. */
export async function listSkill(app: TestApi, token: string, body: Record<string, unknown>): Promise<any> {
  const res = await app.request('POST', `${SKILLS}/list`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Publishes `version` (201 expected) and returns the version. */
export async function publish(app: TestApi, token: string, id: string, version: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await app.request('POST', `${SKILLS}/${id}/versions/publish`, { token, body: { version, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The framework shape of a 400 or 404 (spec 01 part 7.1.1): no code. */
export const frameworkError = (statusCode: 400 | 404, message: unknown = expect.anything()) => ({
  statusCode, error: statusCode === 400 ? 'Bad Request' : 'Not Found', message,
});

/** The app as the telephony route suites start it: on the telephony seed (trunks, numbers, RCS agents, their keys). */
import type { Role } from '../../src/commands/run.js';
import { startApp, type TestApp } from './app.js';
import { startApi, type TestApi } from './api-app.js';

export const TELEPHONY_SEED = new URL('../fixtures/seed-telephony.json', import.meta.url).pathname;

export const startTelephonyApp = (env: Record<string, string> = {}, role: Role = 'start'): Promise<TestApp> => startApp({ SEED_FILE: TELEPHONY_SEED, ...env }, role);

/** The API alone on the telephony seed (api-app.ts), for the suites that check its answers only. */
export const startTelephonyApi = (env: Record<string, string> = {}): Promise<TestApi> => startApi({ SEED_FILE: TELEPHONY_SEED, ...env });

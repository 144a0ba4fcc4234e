/** The app as the workflow route suites start it: on the workflows seed (test/helpers/workflows-seed.ts), with a policy of the suite's own when given. */
import { startApp, type TestApp } from './app.js';
import { startApi, type TestApi } from './api-app.js';
import { writeWorkflowsSeed } from './workflows-seed.js';

export { WF_BASE } from './workflows-seed.js';

export const startWorkflowsApp = (env: Record<string, string> = {}, policy?: Record<string, unknown>): Promise<TestApp> =>
  startApp({ SEED_FILE: policy ? writeWorkflowsSeed(policy) : writeWorkflowsSeed(), ...env });

/** The API alone on the same seed (api-app.ts), for the suites that check its answers only. */
export const startWorkflowsApi = (env: Record<string, string> = {}, policy?: Record<string, unknown>): Promise<TestApi> =>
  startApi({ SEED_FILE: policy ? writeWorkflowsSeed(policy) : writeWorkflowsSeed(), ...env });

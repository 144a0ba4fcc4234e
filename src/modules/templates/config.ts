/**
 * The template family's slice of the configuration (`config.templateDeploys`; docs/api-templates.md,
 * deploy): the deploy answer window and the durable deploy job this process runs.
 */
import { Type, type Static } from '@sinclair/typebox';
import { bool, int, type DeepReadonly } from '../../config/env-schema.js';

export const templateDeploysConfigSchema = Type.Object({
  answerWaitMs: int('TEMPLATE_DEPLOY_ANSWER_WAIT_MS', 10_000, { min: 0, max: 10_000 }, 'how long a deploy request waits for its deploy to end (`201`) before answering `202` (spec 03 part 8: 10 seconds)'),
  jobs: bool('TEMPLATE_DEPLOY_JOBS', true, 'whether this API process runs the deploy job; `false`: it only mints, another process installs'),
  leaseMs: int('TEMPLATE_DEPLOY_LEASE_MS', 30_000, { min: 100, max: 3_600_000 }, 'how long a job holds a deploy without renewing; a dead process\'s deploys are taken over after it'),
  pollMs: int('TEMPLATE_DEPLOY_POLL_MS', 1000, { min: 10, max: 60_000 }, 'how often an idle job looks for deploys minted or left by other processes'),
  slots: int('TEMPLATE_DEPLOY_SLOTS', 4, { min: 1, max: 100 }, 'deploys one job works on at a time'),
  hold: bool('TEMPLATE_DEPLOY_HOLD', false, 'test hook: the job holds every deploy it claims before installing, until the process stops'),
});

export type TemplateDeploysConfig = DeepReadonly<Static<typeof templateDeploysConfigSchema>>;

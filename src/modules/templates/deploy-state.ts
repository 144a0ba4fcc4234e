/**
 * The template deploy state machine (spec 03 part 3: `running`, `succeeded`, `failed`,
 * `rolled_back`, `rollback_pending`; the moves are this family's). Every write of a deploy's
 * `status` goes through `deployTransition`, and the writes apply it conditionally on the status it
 * started from (`where status = any(deploySourcesOf(event))`), so two movers cannot both win.
 *
 *   (none)            --mint-->      running            the agent is minted and the job queued, in one commit
 *   running           --installed--> succeeded          the template is installed on the minted agent
 *   running           --refused-->   rollback_pending   the install refused: the minted agent is to go
 *   rollback_pending  --removed-->   rolled_back        the minted agent is removed
 *   running, rollback_pending --fail--> failed         a step failed past the job's attempts
 */

export type DeployStatus = 'running' | 'succeeded' | 'failed' | 'rolled_back' | 'rollback_pending';

export const DEPLOY_STATUSES: readonly DeployStatus[] = ['running', 'succeeded', 'failed', 'rolled_back', 'rollback_pending'];
export const DEPLOY_TERMINAL: readonly DeployStatus[] = ['succeeded', 'failed', 'rolled_back'];
export const isDeployTerminal = (s: DeployStatus): boolean => DEPLOY_TERMINAL.includes(s);

/** The step a running deploy is at (the poll route's `stage`). */
export type DeployStage = 'install' | 'rollback' | 'done';

export type DeployEvent =
  | { type: 'mint' }
  | { type: 'installed' }
  | { type: 'refused' }
  | { type: 'removed' }
  | { type: 'fail' };

export interface DeployState {
  status: DeployStatus;
  stage: DeployStage;
}

/** Where `event` moves a deploy in `from` (null: not yet created); undefined when the move is not allowed. */
export function deployTransition(from: DeployStatus | null, event: DeployEvent): DeployState | undefined {
  switch (event.type) {
    case 'mint':
      return from === null ? { status: 'running', stage: 'install' } : undefined;
    case 'installed':
      return from === 'running' ? { status: 'succeeded', stage: 'done' } : undefined;
    case 'refused':
      return from === 'running' ? { status: 'rollback_pending', stage: 'rollback' } : undefined;
    case 'removed':
      return from === 'rollback_pending' ? { status: 'rolled_back', stage: 'done' } : undefined;
    case 'fail':
      return from === 'running' || from === 'rollback_pending' ? { status: 'failed', stage: 'done' } : undefined;
  }
}

/** `deployTransition`, for a move the caller has established is allowed; a programming error otherwise. */
export function mustDeployTransition(from: DeployStatus | null, event: DeployEvent): DeployState {
  const next = deployTransition(from, event);
  if (!next) throw new Error(`deploy state machine: ${event.type} is not a move from ${from ?? '(none)'}`);
  return next;
}

/** The statuses a move may start from (for conditional writes). */
export function deploySourcesOf(event: DeployEvent): DeployStatus[] {
  return DEPLOY_STATUSES.filter((s) => deployTransition(s, event) !== undefined);
}

/**
 * The template family's state machines (spec 03 part 3; contract templates),
 * one transition function per stateful object. Every write of a state in this
 * family goes through these: the service computes the next state here and
 * writes it in the unit of work holding the object's row. Install and deploy
 * states add their own section below, in the same form.
 *
 * Template listing:
 *
 * | State                 | Event                         | Next                         | Also                                   |
 * |-----------------------|-------------------------------|------------------------------|----------------------------------------|
 * | any                   | visibility_requested private  | private, no review pending   | takes effect at once                   |
 * | private               | visibility_requested public   | review pending (public)      | spec 4.4: private to public is reviewed|
 * | public                | visibility_requested public   | unchanged                    |                                        |
 * | review pending        | review_approved               | public, no review pending    | the embedded reviewer approves at once |
 * | review pending        | review_rejected               | private, no review pending   |                                        |
 * | listed                | unlisted                      | not listed                   | left out of other organizations' lists |
 * | not listed            | version_published             | listed                       | publishing lists a template again      |
 *
 * Template version (`approvalStatus`, `deprecated`):
 *
 * | State        | Event       | Next                     | Also                                         |
 * |--------------|-------------|--------------------------|----------------------------------------------|
 * | (none)       | published   | pending                  | the embedded reviewer then approves at once  |
 * | pending      | approved    | approved                 | `latestApprovedVersion` follows              |
 * | pending      | rejected    | rejected                 |                                              |
 * | any          | deprecated  | the same, deprecated     | blocks new installs of this version only; a  |
 * |              |             |                          | second deprecate keeps the first reason      |
 */

export type Visibility = 'public' | 'private';

export interface TemplateListing {
  visibility: Visibility;
  listed: boolean;
  /** A requested visibility awaiting review (only `public` is reviewed). */
  pendingVisibility: Visibility | null;
}

export type TemplateEvent =
  | { type: 'visibility_requested'; to: Visibility }
  | { type: 'review_approved' }
  | { type: 'review_rejected' }
  | { type: 'unlisted' }
  | { type: 'version_published' };

/** A move the machine does not make (the caller answers it; the state stays). */
export interface Refused {
  refused: string;
}

export const isRefused = <T>(r: T | Refused): r is Refused => typeof r === 'object' && r !== null && 'refused' in r;

/** The template's next listing state, or why the event does not apply. */
export function templateTransition(s: TemplateListing, e: TemplateEvent): TemplateListing | Refused {
  switch (e.type) {
    case 'visibility_requested':
      if (e.to === 'private') return { ...s, visibility: 'private', pendingVisibility: null };
      if (s.visibility === 'public') return { ...s, pendingVisibility: null };
      return { ...s, pendingVisibility: 'public' };
    case 'review_approved':
      if (s.pendingVisibility === null) return { refused: 'no visibility review is pending' };
      return { ...s, visibility: s.pendingVisibility, pendingVisibility: null };
    case 'review_rejected':
      if (s.pendingVisibility === null) return { refused: 'no visibility review is pending' };
      return { ...s, pendingVisibility: null };
    case 'unlisted':
      return { ...s, listed: false };
    case 'version_published':
      return { ...s, listed: true };
  }
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected';

export interface VersionState {
  approvalStatus: ApprovalStatus;
  deprecated: boolean;
  deprecatedReason: string | null;
}

export type VersionEvent =
  | { type: 'approved' }
  | { type: 'rejected' }
  | { type: 'deprecated'; reason: string | null };

/** A version as publishing creates it: pending review. */
export const PUBLISHED: VersionState = { approvalStatus: 'pending', deprecated: false, deprecatedReason: null };

/** The version's next state, or why the event does not apply. */
export function versionTransition(s: VersionState, e: VersionEvent): VersionState | Refused {
  switch (e.type) {
    case 'approved':
    case 'rejected':
      if (s.approvalStatus !== 'pending') return { refused: `the version is ${s.approvalStatus} already` };
      return { ...s, approvalStatus: e.type };
    case 'deprecated':
      // Deprecating again changes nothing: the first reason stands.
      if (s.deprecated) return s;
      return { ...s, deprecated: true, deprecatedReason: e.reason };
  }
}

/*
 * Template install (`status` of the install result; spec 03 part 2.5):
 *
 * | State                     | Event          | Next             | Also                                            |
 * |---------------------------|----------------|------------------|-------------------------------------------------|
 * | (none)                    | applied        | installed        | a refused install writes nothing (no state)     |
 * | (none)                    | apply_failed   | refused          | a first install that cannot apply is refused    |
 * | any                       | applied        | installed        | something changed on the agent                  |
 * | any                       | unchanged      | already_current  | a re-install that changed nothing               |
 * | any                       | apply_failed   | apply_failed     | the version stays; `lastError` says why         |
 * | any                       | removed        | (none)           | DELETE installs: the record is gone at once     |
 *
 * The setup (the `onInstall` hook) is a state of its own beside it: none (no hook, or deferred to
 * a deploy) -> ok (run started) or failed (code); setup retry moves failed -> ok or failed, and
 * answers `already-started` for ok.
 */

export type InstallStatus = 'installed' | 'already_current' | 'apply_failed';

export type InstallEvent = { type: 'applied' } | { type: 'unchanged' } | { type: 'apply_failed' } | { type: 'removed' };

/** The install's next status (null: no record), or why the event does not apply. */
export function installTransition(from: InstallStatus | null, e: InstallEvent): InstallStatus | null | Refused {
  switch (e.type) {
    case 'applied':
      return 'installed';
    case 'unchanged':
      return from === null ? { refused: 'a first install always applies' } : 'already_current';
    case 'apply_failed':
      return from === null ? { refused: 'a first install that cannot apply is refused, leaving no record' } : 'apply_failed';
    case 'removed':
      return from === null ? { refused: 'the template is not installed' } : null;
  }
}

export type SetupState = { status: 'ok'; workflowRunId: string } | { status: 'failed'; code: string; error: string };

export type SetupEvent = { type: 'started'; runId: string } | { type: 'failed'; code: string; error: string } | { type: 'retried' };

/** The setup's next state (null: nothing to set up), or, for a retry, whether to start the hook again. */
export function setupTransition(from: SetupState | null, e: SetupEvent): SetupState | null | Refused | 'start' {
  switch (e.type) {
    case 'started':
      return { status: 'ok', workflowRunId: e.runId };
    case 'failed':
      return { status: 'failed', code: e.code, error: e.error };
    case 'retried':
      return from?.status === 'ok' ? { refused: 'already-started' } : 'start';
  }
}

/**
 * Template deploy (spec 03 part 3 names the states; the moves are this family's). The writes apply
 * a move only where the deploy is still in a status it starts from (`deploySourcesOf`) and, for the
 * job's moves, still held by the mover's lease: two movers never both win.
 *
 * | State            | Event     | Next             | Also                                                  |
 * |------------------|-----------|------------------|-------------------------------------------------------|
 * | (none)           | mint      | running          | the agent is minted and the job queued in one commit  |
 * | running          | installed | succeeded        | the template is installed on the minted agent         |
 * | running          | refused   | rollback_pending | the install refused: the minted agent is to go        |
 * | rollback_pending | removed   | rolled_back      | the minted agent is removed                           |
 * | running, rollback_pending | fail | failed      | a step failed past the job's attempts                 |
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

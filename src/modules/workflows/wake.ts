/**
 * How executors learn of work at once rather than at their next poll: after a start, a batch or a
 * recovery has committed runs to pick up, the API wakes its own executor and notifies the store's
 * channel, which every listening executor (any process) hears.
 *
 * The notification is its own statement after the commit, not part of the start's transaction:
 * Postgres serializes the commits of transactions that NOTIFY on one global lock, which would make
 * every start of every organization wait on the others' commits. Notifications are coalesced: one
 * statement at a time, and everything asked for while one is on its way answered by a single next.
 */
import type { Sql } from '../../store/sql.js';
import type { Logger } from '../../telemetry/logger.js';
import { notifyRunsWaiting } from './sql/runs.js';

export { WAKE_CHANNEL } from './sql/runs.js';

export function createRunWaker(sql: Sql, logger: Logger, local: () => void): () => void {
  let sending = false;
  let again = false;
  const notify = (): void => {
    if (sending) {
      again = true;
      return;
    }
    sending = true;
    notifyRunsWaiting(sql)
      .catch((e: unknown) => logger.warn({ event: 'workflows.wake_failed', err: { message: (e as Error).message } }, 'workflow wake-up not sent: executors find the runs at their next poll'))
      .finally(() => {
        sending = false;
        if (again) {
          again = false;
          notify();
        }
      });
  };
  return () => {
    local();
    notify();
  };
}

/**
 * Process-wide change counters, for caches of what the store holds (the API's drain read cache,
 * src/modules/drains/read-cache.ts). A cache remembers the counter it read before its statements
 * and trusts its entry only while the counter has not moved since.
 *
 *   drain configuration  moved after every write to the drains table made through any store of
 *                        this process: by the repository after its statement, and again when a
 *                        unit of work ends (its writes are visible only after the commit).
 *   drain activity       moved after every write of what a read form reports live (deliveries,
 *                        hourly counters, the backlog, daily usage) made through this process,
 *                        once the transaction holding it ended.
 *   tenancy              moved after every write to organizations, memberships or agents made by the
 *                        API (tenancy-repo.ts): after its statement, and again when the unit of
 *                        work holding it ended. The credential lookup cache (api/kernel/auth.ts)
 *                        drops what it read before a move.
 *
 * Writes made by other processes are not counted here: the drain configuration's notification
 * (migration 008) and the caches' age bounds cover those.
 */
let drainConfig = 0;
let drainActivity = 0;

export const drainConfigEpoch = (): number => drainConfig;
export const noteDrainConfigChange = (): void => {
  drainConfig++;
};

export const drainActivityEpoch = (): number => drainActivity;
export const noteDrainActivity = (): void => {
  drainActivity++;
};

let tenancy = 0;

export const tenancyEpoch = (): number => tenancy;
export const noteTenancyChange = (): void => {
  tenancy++;
};

/**
 * Per-topic counters of the kernel's read caches (api/kernel/read-cache.ts): a family names a topic
 * for what one of its caches holds, and each unit of work that writes it says so (`tx.changed`),
 * which moves the topic's counter once the transaction has committed and, on Postgres, then
 * notifies the other processes (READS_CHANNEL, store/unit-of-work.ts).
 */
const topics = new Map<string, number>();

export const topicEpoch = (topic: string): number => topics.get(topic) ?? 0;
export const noteTopicChange = (topic: string): void => {
  topics.set(topic, topicEpoch(topic) + 1);
};

/** The notification channel of the read caches' topics (any topic: a listener distrusts every entry). */
export const READS_CHANNEL = 'logdrain_reads';

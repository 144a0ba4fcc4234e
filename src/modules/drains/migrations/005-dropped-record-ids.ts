/**
 * Which records a `dropped` delivery record stands for: their ids, so every
 * record produced can be proven either delivered or dropped with a reason
 * (the fault tests' ledger). Filled for `dropped` rows only; delivered
 * batches keep first/last ids. Kept on the delivery row itself, so it
 * expires with it (seven days) and costs no extra statement per flush.
 */
export const sql = /* sql */ `
alter table deliveries add column record_ids text[];
`;

/** Fixed-window request counters shared by every API process (spec 01 part 8). */
export const sql = /* sql */ `
create table rate_limit_windows (
  bucket text not null,
  subject text not null,
  window_start bigint not null,
  hits integer not null,
  primary key (bucket, subject, window_start)
);
`;

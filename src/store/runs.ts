/**
 * Splits rows into runs of bounded size, so that one statement never carries more than a bound
 * (the embedded store runs each statement on the process's one thread: a bounded statement is a
 * bounded pause for every other request), nor more than `maxRows` rows. A row larger than the
 * bound makes a run of its own.
 */
export function runsOf<T>(rows: readonly T[], sizeOf: (row: T) => number, max: number, maxRows = Infinity): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let size = 0;
  for (const row of rows) {
    const n = sizeOf(row);
    if (run.length > 0 && (size + n > max || run.length >= maxRows)) {
      runs.push(run);
      run = [];
      size = 0;
    }
    run.push(row);
    size += n;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

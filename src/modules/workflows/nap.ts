/**
 * The pause of a poll loop (the executor's and the notification sender's): it sleeps until the
 * poll interval passes or `wake()` is called, whichever comes first. A wake while the loop is busy
 * is not kept: the loop's next pass finds the work anyway.
 */
export interface Nap {
  sleep(ms: number): Promise<void>;
  wake(): void;
}

export function createNap(): Nap {
  let wakeUp: (() => void) | undefined;
  return {
    sleep: (ms) =>
      new Promise<void>((res) => {
        const t = setTimeout(res, ms);
        wakeUp = () => {
          clearTimeout(t);
          res();
        };
      }),
    wake(): void {
      const w = wakeUp;
      wakeUp = undefined;
      w?.();
    },
  };
}

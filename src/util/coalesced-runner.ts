/**
 * Runs an async step on demand, coalescing demands: while a run is under way, any number of
 * further demands fold into one more run after it. NOTIFY and poll both trigger work this way
 * without ever running it twice at once or dropping a demand that arrived mid-run.
 */
export interface CoalescedRunner {
  /** Demands a run; resolves when the run that covers this demand has finished. */
  run(): Promise<void>;
  /** The run under way, if any. */
  readonly current: Promise<void> | undefined;
}

export function createCoalescedRunner(step: () => Promise<void>, shouldRun: () => boolean = () => true): CoalescedRunner {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    get current() {
      return running;
    },
    run() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        try {
          do {
            again = false;
            if (!shouldRun()) return;
            await step();
          } while (again);
        } finally {
          running = undefined;
        }
      })();
      return running;
    },
  };
}

/**
 * A loop's sleep that a wake ends early. A wake while the loop is awake is
 * kept for its next sleep, which then returns at once: work that arrives
 * while the loop is busy is never left waiting for the full sleep.
 */
export class WakeableSleep {
  /** Set by a wake that came while no sleep ran. */
  private woken = false;
  private endSleep: (() => void) | undefined;

  wake(): void {
    if (this.endSleep) this.endSleep();
    else this.woken = true;
  }

  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.endSleep = undefined;
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.endSleep = end;
    });
  }
}

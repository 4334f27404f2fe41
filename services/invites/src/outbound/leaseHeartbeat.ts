/**
 * Renews a change's lease every `everyMs` while its delivery runs, so a
 * slow relay or a queue for a pooled connection never outlasts the lease
 * (another replica would then take the change while it is being sent). A
 * renewal that fails is tried again at the next beat; each send is fenced
 * by the lease anyway (beginSending).
 */
export class LeaseHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly renew: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.beat();
  }

  private beat(): void {
    this.timer = setTimeout(() => {
      void this.renew()
        .catch(this.onError)
        .finally(() => {
          if (!this.stopped) this.beat();
        });
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

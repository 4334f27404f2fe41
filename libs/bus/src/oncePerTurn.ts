/**
 * Runs the work handed to it together, once per turn of the event loop
 * (`setImmediate`: after every socket read of this turn has been handled).
 * A served request's reply is ready when its database answer arrives, each
 * on a socket of its own and so in a callback of its own; sent at once, each
 * reply was a write to NATS of its own. Gathered, the replies of one turn go
 * out in one write, which NATS reads in one go: fewer system calls on both
 * sides, for a delay of less than one turn of the loop.
 */
export class OncePerTurn {
  private queued: Array<() => void> = [];
  private turn: Promise<void> | undefined;
  private endTurn: () => void = () => undefined;

  constructor(private readonly onError: (err: unknown) => void) {}

  /** Queues `work` for this turn's end; settles once it has run (a failure goes to `onError`). */
  run(work: () => void): Promise<void> {
    this.queued.push(work);
    if (!this.turn) {
      this.turn = new Promise((resolve) => (this.endTurn = resolve));
      setImmediate(this.flush);
    }
    return this.turn;
  }

  private readonly flush = (): void => {
    const queued = this.queued;
    const endTurn = this.endTurn;
    this.queued = [];
    this.turn = undefined;
    for (const work of queued) {
      try {
        work();
      } catch (err) {
        this.onError(err);
      }
    }
    endTurn();
  };
}

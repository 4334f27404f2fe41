/**
 * Stops calling a failing dependency for a while. After `threshold` failures
 * in a row the circuit opens: calls are refused at once for `openMs`, then one
 * trial call is let through; its success closes the circuit, its failure opens
 * it again.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialRunning = false;

  constructor(
    private readonly threshold: number,
    private readonly openMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a call may go out now; a true answer while half-open claims the one trial. */
  allow(): boolean {
    if (this.failures < this.threshold) return true;
    if (this.now() < this.openUntil || this.trialRunning) return false;
    this.trialRunning = true;
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.trialRunning = false;
  }

  failed(): void {
    this.failures++;
    this.trialRunning = false;
    if (this.failures >= this.threshold) this.openUntil = this.now() + this.openMs;
  }

  get state(): "closed" | "open" | "half-open" {
    if (this.failures < this.threshold) return "closed";
    return this.now() < this.openUntil ? "open" : "half-open";
  }
}

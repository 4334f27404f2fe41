import { statusText } from "../../lib/load.js";
import type { AttemptStats } from "./attempts.js";
import type { InviteCheck } from "./invites.js";
import type { WriteCheck } from "./writes.js";

/** Everything the suite learned about one fault. */
export interface FaultResult {
  fault: string;
  /** How long breaking and restarting took. */
  faultMs: number;
  /** The machine's one-minute load average when the fault began. */
  loadAverage: number;
  requests: AttemptStats;
  writes: WriteCheck;
  invites: InviteCheck;
}

/**
 * What a client must never see and the system must never do, each with its
 * count; empty when the fault was survived. Unknown verdicts (a client that
 * gave up) and 503s with Retry-After are allowed: they are how a failure
 * should look.
 */
export function findings(r: FaultResult): string[] {
  const counted: Array<[number, string]> = [
    [r.requests.serverErrors, "5xx other than 503"],
    [r.requests.hangs, `hung requests (${statusText(r.requests.hangAnswers)})`],
    [r.requests.unavailableWithoutRetryAfter, "503 without Retry-After"],
    [r.writes.lost.length, "lost creates"],
    [r.writes.doubled.length, "doubled creates"],
    [r.writes.phantom.length, "creates refused yet written"],
    [r.writes.lostUpdates.length, "lost updates"],
    [r.writes.phantomUpdates.length, "updates refused yet written"],
    [r.invites.lost, "lost invites"],
    [r.invites.doubled, "doubled invites"],
    [r.invites.unowed, "invites not owed"],
    [r.invites.unreadable, "e-mails without a readable invite"],
  ];
  return counted.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
}

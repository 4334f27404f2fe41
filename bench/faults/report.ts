import { statusText } from "../lib/load.js";
import { printTable } from "../lib/stats.js";
import { findings, type FaultResult } from "./domain/findings.js";

const seconds = (ms: number) => `${(ms / 1_000).toFixed(1)} s`;

/** The two tables of a run (what clients saw; what was written and e-mailed) and each fault's findings. */
export function printReport(results: readonly FaultResult[], hangBoundMs: number): void {
  printTable(
    `requests during each fault (a hang: no answer within ${seconds(hangBoundMs)}; "failing for": from the fault to the last failed answer)`,
    ["fault", "load avg.", "restart took", "requests", "answers", "longest", "hangs", "5xx≠503", "503 w/o Retry-After", "failing for"],
    results.map((r) => [
      r.fault,
      r.loadAverage.toFixed(1),
      seconds(r.faultMs),
      r.requests.requests,
      statusText(r.requests.answers),
      seconds(r.requests.longestMs),
      r.requests.hangs,
      r.requests.serverErrors,
      r.requests.unavailableWithoutRetryAfter,
      seconds(r.requests.recoveryMs),
    ]),
  );
  printTable(
    "writes and invites once settled (creates and updates: accepted/unknown/refused; invites: one per participant per change)",
    ["fault", "creates", "unknown written", "lost", "doubled", "phantom", "updates", "lost upd.", "invites owed", "once", "lost inv.", "doubled inv. (same Message-ID)", "not owed"],
    results.map(({ fault, writes: w, invites: i }) => [
      fault,
      `${w.creates.accepted}/${w.creates.unknown}/${w.creates.refused}`,
      w.unknownButWritten,
      w.lost.length,
      w.doubled.length,
      w.phantom.length + w.phantomUpdates.length,
      `${w.updates.accepted}/${w.updates.unknown}/${w.updates.refused}`,
      w.lostUpdates.length,
      i.owed,
      i.deliveredOnce,
      i.lost,
      `${i.doubled} (${i.doubledSameMessageId})`,
      i.unowed + i.unreadable,
    ]),
  );
  console.log("");
  for (const r of results) {
    const found = findings(r);
    console.log(`${found.length === 0 ? "ok  " : "FAIL"} ${r.fault}${found.length === 0 ? "" : `: ${found.join(", ")}`}`);
    const examples = [...r.writes.lost, ...r.writes.doubled, ...r.writes.phantom].slice(0, 5);
    if (examples.length > 0) console.log(`     e.g. ${examples.join(", ")}`);
  }
}

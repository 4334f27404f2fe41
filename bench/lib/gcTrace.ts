/**
 * A process's collections read from what node's `--trace-gc-nvp` prints, one
 * line a collection (`… pause=1.2 … gc=s … allocated=… promoted=…`): how
 * many of each kind, their pauses, and the bytes the scavenges moved to the
 * old generation. Counted from the trace, not from a `gc` observer, which
 * itself changed how often the gateway compacted (docs/benchmarks.md).
 */
export interface GcSummary {
  scavenges: number;
  markCompacts: number;
  /** Pauses of both kinds, ms. */
  pauseMs: number;
  maxPauseMs: number;
  /** Bytes the scavenges promoted (a mark-compact takes every survivor to the old generation anyway). */
  promotedBytes: number;
  /** Bytes allocated since the collection before, summed. */
  allocatedBytes: number;
}

/** The `name=value` fields of an nvp line, or undefined for any other line. */
function fieldsOf(line: string): Map<string, string> | undefined {
  if (!line.includes(" pause=") || !line.includes(" gc=")) return undefined;
  const fields = new Map<string, string>();
  for (const token of line.split(/\s+/)) {
    const eq = token.indexOf("=");
    if (eq > 0) fields.set(token.slice(0, eq), token.slice(eq + 1));
  }
  return fields;
}

/** Sums the collections `--trace-gc-nvp` reported in `text` (other lines are skipped). */
export function gcSummary(text: string): GcSummary {
  const summary: GcSummary = { scavenges: 0, markCompacts: 0, pauseMs: 0, maxPauseMs: 0, promotedBytes: 0, allocatedBytes: 0 };
  for (const line of text.split("\n")) {
    const fields = fieldsOf(line);
    if (!fields) continue;
    const kind = fields.get("gc");
    const pause = Number(fields.get("pause") ?? 0);
    if (kind === "s") {
      summary.scavenges++;
      summary.promotedBytes += Number(fields.get("promoted") ?? 0);
    } else if (kind === "mc" || kind === "mmc") summary.markCompacts++;
    else continue;
    summary.pauseMs += pause;
    summary.maxPauseMs = Math.max(summary.maxPauseMs, pause);
    summary.allocatedBytes += Number(fields.get("allocated") ?? 0);
  }
  return summary;
}

/** One line for a report: `scavenges 12 (pauses 48.2 ms, max 6.1), mark-compacts 1, promoted 6.3 MB, allocated 160 MB`. */
export function gcText(s: GcSummary): string {
  const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
  return `scavenges ${s.scavenges}, mark-compacts ${s.markCompacts} (pauses ${s.pauseMs.toFixed(1)} ms, max ${s.maxPauseMs.toFixed(1)}), promoted ${mb(s.promotedBytes)} MB, allocated ${mb(s.allocatedBytes)} MB`;
}

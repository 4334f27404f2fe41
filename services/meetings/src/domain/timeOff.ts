import type { Mode, TimeOff } from "@sched/proto";
import { formatTimestamp } from "./timing.js";

/** Time off as the service holds it. */
export interface TimeOffRecord {
  id: string;
  mode: Mode;
  userId: string;
  start: Date;
  end: Date;
  reason: string;
  createdAt: Date;
}

export function toTimeOff(record: TimeOffRecord): TimeOff {
  return {
    id: record.id,
    start: formatTimestamp(record.start),
    end: formatTimestamp(record.end),
    reason: record.reason,
    createdAt: formatTimestamp(record.createdAt),
  };
}

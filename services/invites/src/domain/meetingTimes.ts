import { DURATION_MINUTES, type Meeting } from "@sched/proto";

export function meetingEndMs(meeting: Pick<Meeting, "startTime" | "duration">): number {
  return Date.parse(meeting.startTime) + DURATION_MINUTES[meeting.duration] * 60_000;
}

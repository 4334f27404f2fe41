import type { Handler } from "@sched/bus";
import type { meetingsBusy, TimeInterval } from "@sched/proto";
import { formatTimestamp } from "../domain/timing.js";
import { busyIntervals } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/** meetings.v1.busy: every requested user, with the confirmed meetings they organize or attend in [from, to). */
export function busy(deps: MeetingsDeps): Handler<typeof meetingsBusy> {
  return async (request) => {
    const rows = await busyIntervals(deps.db, { mode: request.mode, users: request.users, from: new Date(request.from), to: new Date(request.to) });
    const byUser = new Map<string, TimeInterval[]>(request.users.map((u) => [u.userId, []]));
    for (const row of rows) byUser.get(row.userId)?.push({ start: formatTimestamp(row.start), end: formatTimestamp(row.end) });
    return { busy: [...byUser].map(([userId, intervals]) => ({ userId, intervals })) };
  };
}

import type { Handler } from "@sched/bus";
import type { BusyInterval, meetingsBusy } from "@sched/proto";
import { busyIntervals } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/** meetings.v1.busy: every requested user, with their merged busy time in [from, to) as epoch-second pairs. */
export function busy(deps: MeetingsDeps): Handler<typeof meetingsBusy> {
  return async (request) => {
    const rows = await busyIntervals(deps.db, { mode: request.mode, users: request.users, from: new Date(request.from), to: new Date(request.to) });
    const byUser = new Map<string, BusyInterval[]>(request.users.map((u) => [u.userId, []]));
    for (const row of rows) byUser.get(row.userId)?.push([row.start, row.end]);
    return { busy: [...byUser].map(([userId, intervals]) => ({ userId, intervals })) };
  };
}

import { formatTimestamp, type CalendarConnection } from "@sched/proto";
import type { ConnectionRecord } from "../db/queries.js";

export function connectionView(c: ConnectionRecord): CalendarConnection {
  return {
    ...{ id: c.id, provider: c.provider, accountEmail: c.accountEmail, status: c.status, createdAt: formatTimestamp(c.createdAt) },
    ...{ serverUrl: c.serverUrl, default: c.isDefault, busyCalendars: c.busyCalendars },
  };
}

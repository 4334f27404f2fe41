import type { ScheduleInformation } from "@microsoft/microsoft-graph-types";
import type { BusyInterval } from "@sched/proto";
import type { ConnectionRecord } from "../db/connections.js";
import { busyOfSchedule, graphDateTime } from "../domain/graphEvent.js";
import { DeliveryFailure } from "../domain/retry.js";
import type { ConnectionVault } from "./vault.js";

/**
 * Busy time of a Microsoft connection's calendar over [from, to) through
 * getSchedule (one request), answered in UTC. Like Google's, the
 * connection's own calendar is the one there is to count ("primary");
 * a user who chose none counts nothing. Graph answers spans of up to 62
 * days; the API asks at most 31 (the longest horizon) at a time.
 */
export async function microsoftBusy(vault: ConnectionVault, connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
  if (connection.busyCalendars && !connection.busyCalendars.includes("primary")) return [];
  if (!connection.accountEmail) throw new DeliveryFailure("permanent", "Microsoft: the connection has no account address to ask getSchedule about");
  const session = vault.microsoft(connection);
  try {
    const answer = (await session.graph
      .api("/me/calendar/getSchedule")
      .header("Prefer", 'outlook.timezone="UTC"')
      .option("signal", signal)
      .post({ schedules: [connection.accountEmail], startTime: graphDateTime(Date.parse(from)), endTime: graphDateTime(Date.parse(to)), availabilityViewInterval: 15 })) as { value?: ScheduleInformation[] };
    const schedule = answer.value?.find((s) => s.scheduleId?.toLowerCase() === connection.accountEmail) ?? answer.value?.[0];
    if (schedule?.error) throw new DeliveryFailure("transient", `Microsoft getSchedule: ${schedule.error.responseCode ?? ""} ${schedule.error.message ?? ""}`.trim());
    return busyOfSchedule(schedule);
  } catch (err) {
    throw session.failureOf(err);
  }
}

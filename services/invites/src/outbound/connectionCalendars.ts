import type { ConnectionRecord } from "../db/queries.js";
import { googleCalendars } from "./googleBusy.js";
import { microsoftCalendars } from "./microsoftBusy.js";
import type { ConnectionVault } from "./vault.js";

/**
 * The calendars of a connection that hold events, as the provider lists
 * them now: CalDAV's by URL, Google's and Microsoft's by id with their main
 * calendar as `primary`. One request (more past a page) within `timeoutMs`;
 * the provider's errors are thrown as they came.
 */
export async function calendarsOfConnection(vault: ConnectionVault, connection: ConnectionRecord, timeoutMs: number): Promise<Array<{ id: string; name: string }>> {
  const signal = AbortSignal.timeout(timeoutMs);
  switch (connection.provider) {
    case "caldav":
      return (await vault.caldav(connection, timeoutMs, signal)).calendars();
    case "google":
      return googleCalendars(vault, connection, signal);
    case "microsoft":
      return microsoftCalendars(vault, connection, signal);
  }
}

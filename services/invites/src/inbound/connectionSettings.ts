import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { connectionsCalendars, connectionsConnectCalDav, connectionsUpdate, type Caller } from "@sched/proto";
import { type ConnectionRecord, findConnection, updateConnectionSettings, upsertConnection } from "../db/queries.js";
import { CalDavRefusal } from "../outbound/caldav.js";
import { calendarsOfConnection } from "../outbound/connectionCalendars.js";
import { countsAsBusy } from "../domain/busyCalendars.js";
import { asDeliveryFailure, DeliveryFailure } from "../domain/retry.js";
import type { ConnectionVault } from "../outbound/vault.js";
import { connectionView } from "./connectionView.js";
import { announceConnectionChange } from "./connections.js";

export interface ConnectionSettingsDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
  vault: ConnectionVault;
  /** How long a calendar provider may take to answer one request. */
  caldavTimeoutMs: number;
}

/** Test keys never reach a provider: what would call one is refused instead of pretended. */
function requireLive(caller: Caller, what: string): void {
  if (caller.mode !== "live") throw new AppError("forbidden", `Test keys never reach a calendar provider: ${what} with a live key.`);
}

/**
 * CalDAV connections (checked with the server before anything is kept), the
 * calendars of a connection, and its settings: which calendars count as
 * busy time and whether invites go through it.
 */
export function connectionSettingsBindings(deps: ConnectionSettingsDeps): EndpointBinding[] {
  const { db, vault } = deps;

  const ownConnection = async (caller: Caller, id: string): Promise<ConnectionRecord> => {
    const connection = isId("cal", id) ? await findConnection(db, caller.userId, id) : undefined;
    if (!connection) throw notFound("calendar connection");
    return connection;
  };

  const calendarsOf = (caller: Caller, connection: ConnectionRecord) => {
    requireLive(caller, "list or choose the calendars of a connection");
    return calendarsOfConnection(vault, connection, deps.caldavTimeoutMs).catch(async (err: unknown) => {
      const failure = err instanceof CalDavRefusal ? new DeliveryFailure("permanent", err.message) : asDeliveryFailure(err);
      deps.logger.warn({ connectionId: connection.id, provider: connection.provider, error: failure.message }, "calendars of a connection unavailable");
      if (failure.kind === "revoked") {
        await vault.markBroken(connection, failure.message);
        throw new AppError("service_unavailable", "The calendar provider no longer honours this connection's grant; connect the calendar again.");
      }
      throw new AppError("service_unavailable", "The calendar provider did not answer; try again shortly.");
    });
  };

  /**
   * Busy calendars are ids the provider listed: CalDAV ones are URLs that
   * are read (and written) with the user's password, so one of any other
   * server would send it there; Google's and Microsoft's name the calendars
   * free/busy reads.
   */
  const requireKnownCalendars = async (caller: Caller, connection: ConnectionRecord, chosen: readonly string[]) => {
    if (chosen.length === 0) return;
    const known = (await calendarsOf(caller, connection)).map((c) => c.id);
    const unknown = chosen.find((id) => !known.includes(id));
    if (unknown !== undefined) throw new AppError("invalid_request", `Invalid busyCalendars: ${unknown} is not a calendar of this connection (see GET /v1/calendar-connections/${connection.id}/calendars).`, { param: "busyCalendars" });
  };

  return [
    bind(connectionsConnectCalDav, async ({ body }, ctx) => {
      const caller = requireCaller(ctx);
      requireLive(caller, "connect CalDAV");
      try {
        await vault.openCalDav(body, deps.caldavTimeoutMs);
      } catch (err) {
        if (!(err instanceof CalDavRefusal)) throw err;
        deps.logger.info({ userId: caller.userId, kind: err.kind }, "CalDAV connection refused by its server");
        throw new AppError("invalid_request", err.message, { param: err.kind === "credentials" ? "password" : "serverUrl" });
      }
      const connection = await upsertConnection(
        db,
        { id: newId("cal"), userId: caller.userId, provider: "caldav", accountEmail: body.username.includes("@") ? body.username.toLowerCase() : null, serverUrl: body.serverUrl },
        (id) => vault.tokenCipher.seal(body, id),
      );
      await announceConnectionChange(deps.bus, caller.userId);
      return { status: 201, body: connectionView(connection) };
    }),

    bind(connectionsCalendars, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      const connection = await ownConnection(caller, params.id);
      const calendars = await calendarsOf(caller, connection);
      return { status: 200, body: { data: calendars.map((c) => ({ ...c, busy: countsAsBusy(connection, c.id) })) } };
    }),

    bind(connectionsUpdate, async ({ params, body }, ctx) => {
      const caller = requireCaller(ctx);
      const connection = await ownConnection(caller, params.id);
      const busyCalendars = body.busyCalendars === null ? null : body.busyCalendars ? [...new Set(body.busyCalendars)] : undefined;
      if (busyCalendars) await requireKnownCalendars(caller, connection, busyCalendars);
      const updated = await updateConnectionSettings(db, caller.userId, params.id, { ...(busyCalendars !== undefined ? { busyCalendars } : {}), makeDefault: body.default === true });
      if (!updated) throw notFound("calendar connection");
      return { status: 200, body: connectionView(updated) };
    }),
  ];
}

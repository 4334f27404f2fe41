import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bind, MemoryBus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { meetingsRecordResponse, type Meeting, type RequestOf } from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { recordChanges, saveProviderEvent, upsertConnection } from "../src/db/queries.js";
import { GoogleCalendar } from "../src/outbound/google.js";
import { ConnectionVault } from "../src/outbound/vault.js";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

export interface GoogleSeriesStage {
  db: Knex;
  bus: MemoryBus;
  vault: ConnectionVault;
  /** The query strings of each events.list Google was asked. */
  queries: Array<Record<string, string>>;
  /** What was sent to the meetings stand-in to record. */
  recorded: Array<RequestOf<typeof meetingsRecordResponse>>;
  close(): Promise<void>;
}

/**
 * A series of four weekly occurrences (from 17 March 2031, Berlin 09:00) inserted in an organizer's Google calendar
 * as `masterId`, with a real Postgres, a loopback Calendar answering events.list with `items()` as Google does with
 * singleEvents=false, and a stand-in for meetings on the bus that applies every answer.
 */
export async function googleSeriesStage(input: { logger: Logger; seriesId: string; masterId: string; name: string; participants: string[]; items: () => unknown[] }): Promise<GoogleSeriesStage> {
  const queries: Array<Record<string, string>> = [];
  const recorded: Array<RequestOf<typeof meetingsRecordResponse>> = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" || url.pathname !== "/calendar/v3/calendars/primary/events") return void res.writeHead(404).end();
    queries.push(Object.fromEntries(url.searchParams));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ kind: "calendar#events", items: input.items() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const database = await createTestDatabase();
  const db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
  const google = new GoogleCalendar({ clientId: "id", clientSecret: "secret", redirectUrl: "http://localhost/", apiRootUrl: root, authUrl: root, tokenUrl: `${root}token`, timeoutMs: 5_000 });
  const vault = new ConnectionVault(db, new TokenCipher(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")), google, input.logger);
  const userId = `usr_${input.name}`;
  const connection = await upsertConnection(db, { id: `cal_${input.name}`, userId, provider: "google", accountEmail: "org@example.com" }, (id) =>
    vault.tokenCipher.seal({ accessToken: "ya29.fresh", refreshToken: "1//r", expiresAt: Date.now() + 3_600_000 }, id),
  );
  const series: Meeting = {
    id: input.seriesId,
    title: "Weekly",
    description: "",
    startTime: "2031-03-17T08:00:00Z",
    duration: "30 mins",
    participants: input.participants,
    status: "confirmed",
    organizer: "org@example.com",
    createdAt: "2031-01-01T00:00:00Z",
    attendees: [],
    recurrence: "FREQ=WEEKLY;COUNT=4",
    seriesId: null,
    originalStartTime: null,
  };
  await recordChanges(db, [{ change: { meetingId: input.seriesId, sequence: 1, mode: "live", organizer: { userId, email: "org@example.com" }, meeting: series }, planned: [], traceContext: null }]);
  await saveProviderEvent(db, input.seriesId, connection.id, input.masterId);

  const bus = new MemoryBus(input.logger);
  await bus.serve({ name: "meetings-stand-in", version: "1.0.0" }, [
    bind(meetingsRecordResponse, async (request) => {
      recorded.push(request);
      return { outcome: "applied" };
    }),
  ]);
  return {
    db,
    bus,
    vault,
    queries,
    recorded,
    close: async () => {
      await bus.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
      await database.drop();
    },
  };
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bind, MemoryBus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { meetingsRecordResponse, type Meeting, type RequestOf } from "@sched/proto";
import { createTestDatabase, eventually, uniqueSuffix } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertConnection } from "../src/db/connections.js";
import { recordChanges, saveProviderEvent } from "../src/db/deliveries.js";
import { GoogleCalendar } from "../src/outbound/google.js";
import { pollGoogleAnswers } from "../src/outbound/googleAnswers.js";
import { ConnectionVault } from "../src/outbound/vault.js";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

// What the invites send the meetings service for a series' answers read from Google: a real Postgres, a loopback
// Calendar answering events.list as Google does with singleEvents=false, and a stand-in for meetings on the bus.
describe("answers to a series read back from Google (Postgres, loopback Calendar)", () => {
  const logger = createLogger({ name: "invites-google-series-answers-test", level: "silent" });
  const SERIES = `mtg_${uniqueSuffix().replace(/[^a-z0-9]/gi, "").padEnd(24, "0").slice(0, 24)}`;
  const MASTER = "series0event";
  const queries: Array<Record<string, string>> = [];
  let server: Server;
  let db: Knex;
  let drop: () => Promise<void>;
  let bus: MemoryBus;
  const recorded: Array<RequestOf<typeof meetingsRecordResponse>> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (req.method !== "GET" || url.pathname !== "/calendar/v3/calendars/primary/events") return void res.writeHead(404).end();
      queries.push(Object.fromEntries(url.searchParams));
      const items = [
        // The series' event: Ann accepted the series, Bob has not answered.
        { id: MASTER, status: "confirmed", attendees: [{ email: "ann@example.com", responseStatus: "accepted" }, { email: "bob@example.com", responseStatus: "needsAction" }] },
        // One occurrence Ann declined on its own, and Bob accepted.
        {
          id: `${MASTER}_20310324T080000Z`,
          status: "confirmed",
          recurringEventId: MASTER,
          originalStartTime: { dateTime: "2031-03-24T09:00:00+01:00", timeZone: "Europe/Berlin" },
          attendees: [{ email: "ann@example.com", responseStatus: "declined" }, { email: "bob@example.com", responseStatus: "accepted" }],
        },
        // A cancelled occurrence keeps the answers it had: none is read.
        { id: `${MASTER}_20310331T070000Z`, status: "cancelled", recurringEventId: MASTER, originalStartTime: { dateTime: "2031-03-31T09:00:00+02:00" }, attendees: [{ email: "ann@example.com", responseStatus: "tentative" }] },
      ];
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ kind: "calendar#events", items }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
    const google = new GoogleCalendar({ clientId: "id", clientSecret: "secret", redirectUrl: "http://localhost/", apiRootUrl: root, authUrl: root, tokenUrl: `${root}token`, timeoutMs: 5_000 });
    const vault = new ConnectionVault(db, new TokenCipher(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")), google, logger);
    const connection = await upsertConnection(db, { id: "cal_googleseries", userId: "usr_googleseries", provider: "google", accountEmail: "org@example.com" }, (id) =>
      vault.tokenCipher.seal({ accessToken: "ya29.fresh", refreshToken: "1//r", expiresAt: Date.now() + 3_600_000 }, id),
    );
    const series: Meeting = { id: SERIES, title: "Weekly", description: "", startTime: "2031-03-17T08:00:00Z", duration: "30 mins", participants: ["ann@example.com", "bob@example.com"], status: "confirmed", organizer: "org@example.com", createdAt: "2031-01-01T00:00:00Z", attendees: [], recurrence: "FREQ=WEEKLY;COUNT=4", seriesId: null, originalStartTime: null };
    await recordChanges(db, [{ change: { meetingId: SERIES, sequence: 1, mode: "live", organizer: { userId: "usr_googleseries", email: "org@example.com" }, meeting: series }, planned: [], traceContext: null }]);
    await saveProviderEvent(db, SERIES, connection.id, MASTER);

    bus = new MemoryBus(logger);
    await bus.serve({ name: "meetings-stand-in", version: "1.0.0" }, [
      bind(meetingsRecordResponse, async (request) => {
        recorded.push(request);
        return { outcome: "applied" };
      }),
    ]);
    const poller = pollGoogleAnswers(db, bus, vault, logger, { everyMs: 100, windowDays: 7, timeoutMs: 5_000 });
    await eventually(() => (queries.length >= 3 ? true : undefined), 20_000, 50);
    await poller.stop();
  });
  afterAll(async () => {
    await bus?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await db?.destroy();
    await drop?.();
  });

  it("lists series whole (singleEvents=false) with the fields the answers need", () => {
    expect(queries[0]).toMatchObject({ singleEvents: "false" });
    expect(queries[0]!.fields).toContain("recurringEventId");
    expect(queries[0]!.fields).toContain("originalStartTime");
  });

  it("sends the series' answers for the series id and an occurrence's differing answers for its occurrence id, each once", () => {
    expect(recorded.map((r) => [r.meetingId, r.email, r.response, r.organizerEmail, r.source])).toEqual([
      [SERIES, "ann@example.com", "accepted", "org@example.com", "google"],
      [`${SERIES}_20310324T080000Z`, "ann@example.com", "declined", "org@example.com", "google"],
      [`${SERIES}_20310324T080000Z`, "bob@example.com", "accepted", "org@example.com", "google"],
    ]);
  });
});

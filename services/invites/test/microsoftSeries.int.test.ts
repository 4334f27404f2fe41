import { bind, MemoryBus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse, type ChangedOccurrence, type Meeting, type RequestOf, type SeriesOfEvent } from "@sched/proto";
import { createTestDatabase, eventually, uniqueSuffix } from "@sched/testing";
import { FakeMicrosoft } from "@sched/testing/microsoft";
import { SmtpFake } from "@sched/testing/smtp";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findProviderEvent, latestDeliveries, recordChanges, upsertConnection } from "../src/db/queries.js";
import { EmailSender } from "../src/outbound/email.js";
import { GoogleCalendar } from "../src/outbound/google.js";
import { MicrosoftCalendar } from "../src/outbound/microsoft.js";
import { pollMicrosoftAnswers } from "../src/outbound/microsoftAnswers.js";
import { ConnectionVault } from "../src/outbound/vault.js";
import { DeliveryWorker } from "../src/outbound/worker.js";
import type { PlannedDelivery } from "../src/domain/plan.js";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

// A series through the organizer's Microsoft calendar, on a real Postgres, the loopback Graph and a loopback SMTP server.
describe("series through Microsoft Graph (Postgres, fake Graph)", () => {
  const logger = createLogger({ name: "invites-microsoft-series-test", level: "silent" });
  const microsoft = new FakeMicrosoft();
  const smtp = new SmtpFake();
  let db: Knex;
  let drop: () => Promise<void>;
  let vault: ConnectionVault;
  let calendar: MicrosoftCalendar;
  let email: EmailSender;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
    const url = await microsoft.start();
    calendar = new MicrosoftCalendar({ clientId: microsoft.clientId, clientSecret: microsoft.clientSecret, redirectUrl: "http://localhost/cb", authority: `${url}/common`, graphUrl: url, timeoutMs: 5_000 });
    const google = new GoogleCalendar({ redirectUrl: "http://localhost/", apiRootUrl: "http://127.0.0.1:9/", authUrl: "http://127.0.0.1:9/", tokenUrl: "http://127.0.0.1:9/", timeoutMs: 1_000 });
    vault = new ConnectionVault(db, new TokenCipher(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")), google, logger, false, calendar);
    email = new EmailSender({ smtpUrl: await smtp.start(), from: "invites@example.com", uidDomain: "sched.test", timeoutMs: 10_000 });
    const worker = new DeliveryWorker({
      db,
      logger,
      email,
      google,
      microsoft: calendar,
      vault,
      settings: { uidDomain: "sched.test", providerTimeoutMs: 5_000, maxAttempts: 4, retryBaseMs: 20, leaseMs: 60_000, batch: 8, pollMs: 50 },
    });
    worker.start();
    stops.push(() => worker.stop());
  });
  afterEach(async () => {
    while (stops.length > 1) await stops.pop()!();
  });
  afterAll(async () => {
    await Promise.all(stops.map((stop) => stop()));
    email?.close();
    await smtp.stop();
    await microsoft.stop();
    await db?.destroy();
    await drop?.();
  });

  /** An organizer whose Microsoft calendar is connected. */
  const organizer = async () => {
    const userId = `usr_${uniqueSuffix().replace(/[^a-z0-9]/gi, "")}`;
    const grant = microsoft.grant(`org-${uniqueSuffix()}@contoso.example`);
    await upsertConnection(db, { id: `cal_${uniqueSuffix().replace(/[^a-z0-9]/gi, "")}`, userId, provider: "microsoft", accountEmail: grant.accountEmail }, (id) => vault.tokenCipher.seal(grant, id));
    return { userId, email: grant.accountEmail };
  };

  const newSeriesId = () => `mtg_${uniqueSuffix().replace(/[^a-z0-9]/gi, "").padEnd(24, "0").slice(0, 24)}`;

  /** A series' meeting (the series itself, or one occurrence of it). */
  const seriesMeeting = (id: string, org: { email: string }, fields: Partial<Meeting>): Meeting => ({
    id,
    title: "Weekly",
    description: "",
    startTime: "2031-03-17T08:00:00Z",
    duration: "30 mins",
    participants: ["ann@example.com"],
    status: "confirmed",
    organizer: org.email,
    createdAt: "2031-01-01T00:00:00Z",
    attendees: [],
    recurrence: "FREQ=WEEKLY;COUNT=4",
    seriesId: null,
    originalStartTime: null,
    ...fields,
  });

  /** Records a change as the event consumer does, and waits for the worker to finish it. */
  const deliver = async (org: { userId: string; email: string }, change: { meetingId: string; sequence: number; meeting: Meeting; series: SeriesOfEvent }, planned: PlannedDelivery[]) => {
    await recordChanges(db, [{ change: { ...change, mode: "live", organizer: org }, planned, traceContext: null }]);
    return eventually(async () => {
      const row = (await db("meeting_changes").where({ meeting_id: change.meetingId, sequence: change.sequence }).first()) as { state: string } | undefined;
      return row && row.state !== "pending" ? row.state : undefined;
    }, 20_000, 50);
  };

  it("puts a moved occurrence back after Exchange dropped it with the series' pattern written again, and leaves the cancelled one cancelled", async () => {
    const org = await organizer();
    const id = newSeriesId();
    const rule: SeriesOfEvent = { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
    expect(await deliver(org, { meetingId: id, sequence: 1, meeting: seriesMeeting(id, org, {}), series: rule }, [{ email: "ann@example.com", kind: "request" }])).toBe("done");
    const masterId = (await findProviderEvent(db, id))!.providerEventId;
    const master = microsoft.events.get(masterId)!;

    // 24 March moves to Tuesday 10:00 Berlin, renamed; 31 March is cancelled.
    const moved: ChangedOccurrence = { originalStartTime: "2031-03-24T08:00:00Z", title: "Moved", description: "", startTime: "2031-03-25T09:00:00Z", duration: "30 mins", participants: ["ann@example.com"], sequence: 2 };
    const movedMeeting = seriesMeeting(`${id}_20310324T080000Z`, org, { ...moved, recurrence: null, seriesId: id });
    expect(await deliver(org, { meetingId: movedMeeting.id, sequence: 2, meeting: movedMeeting, series: { ...rule, changedOccurrences: [moved] } }, [{ email: "ann@example.com", kind: "request" }])).toBe("done");
    const cancelledMeeting = seriesMeeting(`${id}_20310331T070000Z`, org, { startTime: "2031-03-31T07:00:00Z", status: "cancelled", recurrence: null, seriesId: id, originalStartTime: "2031-03-31T07:00:00Z" });
    const withCancelled = { ...rule, cancelledStarts: ["2031-03-31T07:00:00Z"], changedOccurrences: [moved] };
    expect(await deliver(org, { meetingId: cancelledMeeting.id, sequence: 3, meeting: cancelledMeeting, series: withCancelled }, [{ email: "ann@example.com", kind: "cancel" }])).toBe("done");
    const shown = () => microsoft.instancesOf(master, Date.parse("2031-03-01T00:00:00Z"), Date.parse("2031-05-01T00:00:00Z"), { withCancelled: true }).map((i) => [i.originalStart, i.type, i.subject, i.start.dateTime, i.isCancelled]);
    const expected = (title: string) => [
      ["2031-03-17T08:00:00Z", "occurrence", title, "2031-03-17T08:00:00.0000000", false],
      ["2031-03-24T08:00:00Z", "exception", "Moved", "2031-03-25T09:00:00.0000000", false],
      ["2031-03-31T07:00:00Z", "exception", title, "2031-03-31T07:00:00.0000000", true],
      ["2031-04-07T07:00:00Z", "occurrence", title, "2031-04-07T07:00:00.0000000", false],
    ];
    expect(shown()).toEqual(expected("Weekly"));

    // The series renamed: its pattern is written again, which drops both exceptions; both come back.
    const instancePatches = () => microsoft.graphCalls().filter((c) => c.method === "PATCH" && decodeURIComponent(c.path).startsWith(`/v1.0/me/events/${masterId}_`));
    expect(instancePatches()).toHaveLength(1);
    expect(await deliver(org, { meetingId: id, sequence: 4, meeting: seriesMeeting(id, org, { title: "Weekly, renamed" }), series: withCancelled }, [{ email: "ann@example.com", kind: "request" }])).toBe("done");
    expect(shown()).toEqual(expected("Weekly, renamed"));
    expect(instancePatches()).toHaveLength(2);
    expect(instancePatches()[1]!.body).toMatchObject({ subject: "Moved", start: { dateTime: "2031-03-25T09:00:00", timeZone: "UTC" } });
    expect(smtp.to("ann@example.com")).toEqual([]);
  });

  it("carries a rule Graph cannot say by e-mail and keeps why with each delivery", async () => {
    const org = await organizer();
    const id = newSeriesId();
    const guest = `cy-${uniqueSuffix()}@example.com`;
    const series: SeriesOfEvent = { rule: "FREQ=MONTHLY;COUNT=4;BYMONTHDAY=1,15", timeZone: "Europe/Berlin", cancelledStarts: [] };
    const meeting = seriesMeeting(id, org, { startTime: "2031-04-01T07:00:00Z", participants: [guest], recurrence: series.rule });
    expect(await deliver(org, { meetingId: id, sequence: 1, meeting, series }, [{ email: guest, kind: "request" }])).toBe("done");
    const [delivery] = await latestDeliveries(db, id);
    expect([delivery!.channel, delivery!.state, delivery!.lastError]).toEqual(["email", "sent", null]);
    expect(delivery!.fallbackReason).toBe("Microsoft Graph cannot repeat the series as its rule says (Graph repeats on one day of the month only); sent by e-mail");
    expect(smtp.to(guest)).toHaveLength(1);
  });

  it("reads answers to the series from its recurring event and an answer to one occurrence from its instance", async () => {
    const org = await organizer();
    const id = newSeriesId();
    const bus = new MemoryBus(logger);
    const recorded: Array<RequestOf<typeof meetingsRecordResponse>> = [];
    const served = await bus.serve({ name: "meetings-stand-in", version: "1.0.0" }, [
      bind(meetingsRecordResponse, async (request) => {
        recorded.push(request);
        return { outcome: "applied" };
      }),
    ]);
    stops.push(async () => {
      await served.stop();
      await bus.close();
    });
    // Daily at 09:00 UTC from tomorrow: inside the window the answers are read over.
    const first = new Date(Date.now() + 86_400_000);
    first.setUTCHours(9, 0, 0, 0);
    const series: SeriesOfEvent = { rule: "FREQ=DAILY;COUNT=3", timeZone: "UTC", cancelledStarts: [] };
    const meeting = seriesMeeting(id, org, { startTime: formatTimestamp(first), participants: ["ann@example.com", "bob@example.com"], recurrence: series.rule });
    expect(await deliver(org, { meetingId: id, sequence: 1, meeting, series }, [{ email: "ann@example.com", kind: "request" }, { email: "bob@example.com", kind: "request" }])).toBe("done");
    const masterId = (await findProviderEvent(db, id))!.providerEventId;
    const second = formatTimestamp(first.getTime() + 86_400_000);
    microsoft.respond(masterId, "ann@example.com", "accepted", new Date("2031-01-02T10:00:00Z"));
    microsoft.respond(masterId, "bob@example.com", "tentativelyAccepted", new Date("2031-01-02T11:00:00Z"));
    microsoft.respondToOccurrence(masterId, second, "ann@example.com", "declined", new Date("2031-01-03T10:00:00Z"));

    const poller = pollMicrosoftAnswers(db, bus, vault, logger, { everyMs: 100, windowDays: 7, timeoutMs: 5_000 });
    stops.push(() => poller.stop());
    const occurrenceId = `${id}_${second.replace(/[-:]/g, "")}`;
    const mine = () => recorded.filter((r) => r.meetingId.startsWith(id));
    await eventually(() => (mine().length >= 3 ? true : undefined), 20_000, 50);
    // A few more rounds: each answer is sent once.
    await new Promise((r) => setTimeout(r, 400));
    expect(mine().map((r) => [r.meetingId, r.email, r.response, r.respondedAt, r.organizerEmail, r.source]).sort()).toEqual(
      [
        [id, "ann@example.com", "accepted", "2031-01-02T10:00:00Z", org.email, "microsoft"],
        [id, "bob@example.com", "tentative", "2031-01-02T11:00:00Z", org.email, "microsoft"],
        [occurrenceId, "ann@example.com", "declined", "2031-01-03T10:00:00Z", org.email, "microsoft"],
      ].sort(),
    );
    // Ann accepts that occurrence again, as she did the series: recorded for the occurrence, which has an answer of its own.
    microsoft.respondToOccurrence(masterId, second, "ann@example.com", "accepted", new Date("2031-01-04T10:00:00Z"));
    await eventually(() => (mine().length >= 4 ? true : undefined), 20_000, 50);
    expect(mine().slice(3).map((r) => [r.meetingId, r.email, r.response, r.respondedAt])).toEqual([[occurrenceId, "ann@example.com", "accepted", "2031-01-04T10:00:00Z"]]);
  });
});

import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { createTestDatabase, eventually, uniqueSuffix } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answeredApartOf, recordAnsweredApart } from "../src/db/queries.js";
import { invitesService } from "../src/index.js";
import { pollGoogleAnswers } from "../src/outbound/googleAnswers.js";
import { googleSeriesStage, type GoogleSeriesStage } from "./googleSeriesHarness.js";

// An occurrence answered on its own is remembered in invites' schema: a read-back started afresh (a restart, or another
// replica's turn) still sends that occurrence's answer when it comes back to the series' answer.
describe("occurrences answered on their own, across a restart of the read-back (Postgres, loopback Calendar)", () => {
  const logger = createLogger({ name: "invites-answered-apart-test", level: "silent" });
  const SERIES = `mtg_${uniqueSuffix().replace(/[^a-z0-9]/gi, "").padEnd(24, "0").slice(0, 24)}`;
  const MASTER = "apart0event";
  const OCCURRENCE = `${SERIES}_20310324T080000Z`;
  let annOnInstance = "declined";
  let stage: GoogleSeriesStage;

  const pollUntilRead = async (rounds: number) => {
    const from = stage.queries.length;
    const poller = pollGoogleAnswers(stage.db, stage.bus, stage.vault, logger, { everyMs: 100, windowDays: 7, timeoutMs: 5_000 });
    await eventually(() => (stage.queries.length >= from + rounds ? true : undefined), 20_000, 50);
    await poller.stop();
  };

  beforeAll(async () => {
    const items = () => [
      { id: MASTER, status: "confirmed", attendees: [{ email: "ann@example.com", responseStatus: "accepted" }] },
      {
        id: `${MASTER}_20310324T080000Z`,
        status: "confirmed",
        recurringEventId: MASTER,
        originalStartTime: { dateTime: "2031-03-24T09:00:00+01:00", timeZone: "Europe/Berlin" },
        attendees: [{ email: "ann@example.com", responseStatus: annOnInstance }],
      },
    ];
    stage = await googleSeriesStage({ logger, seriesId: SERIES, masterId: MASTER, name: "answeredapart", participants: ["ann@example.com"], items });
  });
  afterAll(async () => {
    await stage?.close();
  });

  it("after a restart, coming back to the series' answer on the occurrence is still sent for the occurrence", async () => {
    await pollUntilRead(2);
    expect(stage.recorded.filter((r) => r.meetingId === OCCURRENCE).map((r) => r.response)).toEqual(["declined"]);

    // The read-back stops (a restart); meanwhile Ann accepts the occurrence again, as she accepted the series.
    annOnInstance = "accepted";
    await pollUntilRead(2);
    expect(stage.recorded.filter((r) => r.meetingId === OCCURRENCE).map((r) => r.response)).toEqual(["declined", "accepted"]);
    // The series' answer is sent for the series only.
    expect(new Set(stage.recorded.filter((r) => r.meetingId !== OCCURRENCE).map((r) => `${r.meetingId}|${r.response}`))).toEqual(new Set([`${SERIES}|accepted`]));
  });
});

describe("occurrences answered on their own, forgotten with their series (Postgres)", () => {
  let db: Knex;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  const deliver = (meetingId: string, sequence: number, email: string, kind: "request" | "cancel") =>
    db("deliveries").insert({ meeting_id: meetingId, sequence, email, kind, channel: "google", state: "sent" });

  it("drops the rows of a series whose newest change cancelled it for everyone, moved occurrences included, and keeps those of a series still on", async () => {
    const longPast = new Date("2020-01-06T09:00:00Z");
    const ahead = new Date("2031-01-06T09:00:00Z");
    // A series cancelled after a participant was dropped; an occurrence of it moved (its own changes keep requests).
    await deliver("mtg_cancelled", 1, "ann@example.com", "request");
    await deliver("mtg_cancelled", 1, "bob@example.com", "request");
    await deliver("mtg_cancelled", 2, "bob@example.com", "cancel");
    await deliver("mtg_cancelled", 3, "ann@example.com", "cancel");
    await deliver(`mtg_cancelled_20310106T090000Z`, 2, "ann@example.com", "request");
    // A series on, whose newest change dropped one participant but not the other; and one long past, moved ahead.
    await deliver("mtg_on", 1, "ann@example.com", "request");
    await deliver("mtg_on", 2, "ann@example.com", "request");
    await deliver("mtg_on", 2, "bob@example.com", "cancel");
    await recordAnsweredApart(db, [
      { seriesId: "mtg_cancelled", originalStart: ahead, email: "ann@example.com" },
      { seriesId: "mtg_cancelled", originalStart: longPast, email: "bob@example.com" },
      { seriesId: "mtg_on", originalStart: longPast, email: "ann@example.com" },
      { seriesId: "mtg_on", originalStart: ahead, email: "bob@example.com" },
      // A series invites sent nothing for (yet): nothing tells it is over.
      { seriesId: "mtg_unsent", originalStart: ahead, email: "ann@example.com" },
    ]);

    expect(await answeredApartOf(db, ["mtg_cancelled", "mtg_on", "mtg_unsent"])).toEqual(
      new Set([`mtg_on_20200106T090000Z|ann@example.com`, `mtg_on_20310106T090000Z|bob@example.com`, `mtg_unsent_20310106T090000Z|ann@example.com`]),
    );
    expect(await db("answered_apart").where({ series_id: "mtg_cancelled" }).select("email")).toEqual([]);
  });
});

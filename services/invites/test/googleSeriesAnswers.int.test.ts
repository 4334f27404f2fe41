import { createLogger } from "@sched/logging";
import { eventually, uniqueSuffix } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pollGoogleAnswers } from "../src/outbound/googleAnswers.js";
import { googleSeriesStage, type GoogleSeriesStage } from "./googleSeriesHarness.js";

// What the invites send the meetings service for a series' answers read from Google: a real Postgres, a loopback
// Calendar answering events.list as Google does with singleEvents=false, and a stand-in for meetings on the bus.
describe("answers to a series read back from Google (Postgres, loopback Calendar)", () => {
  const logger = createLogger({ name: "invites-google-series-answers-test", level: "silent" });
  const SERIES = `mtg_${uniqueSuffix().replace(/[^a-z0-9]/gi, "").padEnd(24, "0").slice(0, 24)}`;
  const MASTER = "series0event";
  let stage: GoogleSeriesStage;

  beforeAll(async () => {
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
    stage = await googleSeriesStage({ logger, seriesId: SERIES, masterId: MASTER, name: "googleseries", participants: ["ann@example.com", "bob@example.com"], items: () => items });
    const poller = pollGoogleAnswers(stage.db, stage.bus, stage.vault, logger, { everyMs: 100, windowDays: 7, timeoutMs: 5_000 });
    await eventually(() => (stage.queries.length >= 3 ? true : undefined), 20_000, 50);
    await poller.stop();
  });
  afterAll(async () => {
    await stage?.close();
  });

  it("lists series whole (singleEvents=false) with the fields the answers need", () => {
    expect(stage.queries[0]).toMatchObject({ singleEvents: "false" });
    expect(stage.queries[0]!.fields).toContain("recurringEventId");
    expect(stage.queries[0]!.fields).toContain("originalStartTime");
  });

  it("sends the series' answers for the series id and an occurrence's differing answers for its occurrence id, each once", () => {
    expect(stage.recorded.map((r) => [r.meetingId, r.email, r.response, r.organizerEmail, r.source])).toEqual([
      [SERIES, "ann@example.com", "accepted", "org@example.com", "google"],
      [`${SERIES}_20310324T080000Z`, "ann@example.com", "declined", "org@example.com", "google"],
      [`${SERIES}_20310324T080000Z`, "bob@example.com", "accepted", "org@example.com", "google"],
    ]);
  });
});

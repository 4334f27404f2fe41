import { createLogger } from "@sched/logging";
import { eventually, uniqueSuffix } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

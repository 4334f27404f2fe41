import { describe, expect, it } from "vitest";
import { answersOfGoogleEvents, answersToRecord } from "../src/domain/calendarAnswers.js";

const SERIES = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";

describe("answersToRecord", () => {
  it("a single meeting's or a series' event: each answer to the meeting or the whole series, addresses lower-cased", () => {
    expect(answersToRecord(SERIES, [{ email: "Ann@example.com", response: "accepted", at: "2031-01-01T10:00:00Z" }])).toEqual([{ meetingId: SERIES, email: "ann@example.com", response: "accepted", at: "2031-01-01T10:00:00Z" }]);
  });

  it("an instance: only the answers that differ from the series', for the occurrence's id", () => {
    const answers = answersToRecord(
      SERIES,
      [
        { email: "ann@example.com", response: "accepted" },
        { email: "bob@example.com", response: "tentative" },
      ],
      [
        // The calendar copies the series' answers into each instance: nothing new there.
        { originalStart: "2031-03-17T08:00:00Z", shown: [{ email: "ann@example.com", response: "accepted" }, { email: "bob@example.com", response: "tentative" }] },
        // Ann declined 24 March alone; Cy, who never answered the series, accepted it.
        { originalStart: "2031-03-24T09:00:00+01:00", shown: [{ email: "ANN@example.com", response: "declined" }, { email: "bob@example.com", response: "tentative" }, { email: "cy@example.com", response: "accepted" }] },
      ],
    );
    expect(answers.map((a) => [a.meetingId, a.email, a.response])).toEqual([
      [SERIES, "ann@example.com", "accepted"],
      [SERIES, "bob@example.com", "tentative"],
      [`${SERIES}_20310324T080000Z`, "ann@example.com", "declined"],
      [`${SERIES}_20310324T080000Z`, "cy@example.com", "accepted"],
    ]);
  });
});

describe("answersOfGoogleEvents", () => {
  const ours = [
    { providerEventId: "single1", meetingId: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", organizerEmail: "o@example.com" },
    { providerEventId: "series1", meetingId: SERIES, organizerEmail: "o@example.com" },
  ];

  it("reads a single event, a series' event and its instances changed on their own; others' events and cancelled items show nothing", () => {
    const listed = [
      { id: "single1", status: "confirmed", attendees: [{ email: "a@example.com", responseStatus: "declined" }, { email: "b@example.com", responseStatus: "needsAction" }] },
      { id: "series1", status: "confirmed", attendees: [{ email: "a@example.com", responseStatus: "accepted" }] },
      { id: "series1_20310324T080000Z", status: "confirmed", recurringEventId: "series1", originalStartTime: { dateTime: "2031-03-24T09:00:00+01:00" }, attendees: [{ email: "a@example.com", responseStatus: "tentative" }] },
      { id: "series1_20310331T070000Z", status: "cancelled", recurringEventId: "series1", originalStartTime: { dateTime: "2031-03-31T09:00:00+02:00" }, attendees: [{ email: "a@example.com", responseStatus: "declined" }] },
      { id: "someone-elses", status: "confirmed", attendees: [{ email: "a@example.com", responseStatus: "accepted" }] },
    ];
    const read = answersOfGoogleEvents(listed, ours);
    expect(read.map((r) => [r.meeting.providerEventId, r.answers.map((a) => [a.meetingId, a.email, a.response])])).toEqual([
      ["single1", [["mtg_aaaaaaaaaaaaaaaaaaaaaaaa", "a@example.com", "declined"]]],
      [
        "series1",
        [
          [SERIES, "a@example.com", "accepted"],
          [`${SERIES}_20310324T080000Z`, "a@example.com", "tentative"],
        ],
      ],
    ]);
  });
});

describe("answersToRecord after an answer of one's own to an occurrence", () => {
  it("sends the instance's answer for the occurrence even when it is the series' again", () => {
    const apart = new Set([`${SERIES}_20310324T080000Z|ann@example.com`]);
    const answers = answersToRecord(SERIES, [{ email: "ann@example.com", response: "accepted" }], [{ originalStart: "2031-03-24T08:00:00Z", shown: [{ email: "ann@example.com", response: "accepted" }] }], (id, email) => apart.has(`${id}|${email}`));
    expect(answers.map((a) => [a.meetingId, a.response])).toEqual([
      [SERIES, "accepted"],
      [`${SERIES}_20310324T080000Z`, "accepted"],
    ]);
  });
});

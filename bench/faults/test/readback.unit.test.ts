import { describe, expect, it } from "vitest";
import type { CapturedMail } from "../../../services/standalone/test/fakes/smtpFake.js";
import { UPDATED_SUFFIX } from "../domain/writes.js";
import { mailsTo, owingMeetings } from "../readback.js";

describe("owingMeetings", () => {
  it("owes a meeting's creation, and its update when the title carries it, under the meeting's UID", () => {
    const listed = [
      { id: "mtg_1", title: "k1", participants: ["a@x.example"] },
      { id: "mtg_2", title: `k2${UPDATED_SUFFIX}`, participants: ["a@x.example", "b@x.example"] },
    ];
    expect(owingMeetings(listed, "faults.invalid")).toEqual([
      { uid: "mtg_1@faults.invalid", changes: 1, participants: ["a@x.example"] },
      { uid: "mtg_2@faults.invalid", changes: 2, participants: ["a@x.example", "b@x.example"] },
    ]);
  });
});

describe("mailsTo", () => {
  const caught = (to: string, messageId?: string, ics?: string) => ({ envelopeTo: [to], mail: { messageId }, ics }) as unknown as CapturedMail;

  it("keeps the mails of the recipients given, with what the count needs", () => {
    const mails = [caught("a@x.example", "<1@x>", "BEGIN:VCALENDAR"), caught("z@x.example", "<2@x>", "BEGIN:VCALENDAR"), caught("b@x.example")];
    expect(mailsTo(mails, ["a@x.example", "b@x.example"])).toEqual([{ recipients: ["a@x.example"], messageId: "<1@x>", ics: "BEGIN:VCALENDAR" }, { recipients: ["b@x.example"] }]);
  });
});

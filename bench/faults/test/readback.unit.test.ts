import type { CapturedMail } from "@sched/testing/smtp";
import type { ParsedMail } from "mailparser";
import { describe, expect, it } from "vitest";
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
  const caught = (envelopeTo: string[], messageId?: string, ics?: string): CapturedMail => ({ envelopeTo, mail: { messageId } as ParsedMail, ics });

  it("keeps the mails to any of the recipients given, with their Message-ID and invite", () => {
    const mails = [caught(["a@x.example"], "<1@x>", "BEGIN:VCALENDAR"), caught(["z@x.example"]), caught(["y@x.example", "b@x.example"])];
    expect(mailsTo(mails, ["a@x.example", "b@x.example"])).toEqual([
      { recipients: ["a@x.example"], messageId: "<1@x>", ics: "BEGIN:VCALENDAR" },
      { recipients: ["y@x.example", "b@x.example"] },
    ]);
  });
});

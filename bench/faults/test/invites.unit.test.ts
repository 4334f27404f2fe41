import { describe, expect, it } from "vitest";
import { checkInvites, icsFacts, type CaughtMail, type OwingMeeting } from "../domain/invites.js";

const ics = (uid: string, sequence: number, method = "REQUEST") =>
  ["BEGIN:VCALENDAR", `METHOD:${method}`, "BEGIN:VEVENT", `UID:${uid}`, `SEQUENCE:${sequence}`, "SUMMARY:Kickoff", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
const mail = (to: string, uid: string, sequence: number, messageId?: string, method?: string): CaughtMail => ({ recipients: [to], ics: ics(uid, sequence, method), ...(messageId ? { messageId } : {}) });
const owing = (uid: string, changes: number): OwingMeeting => ({ uid, changes, participants: ["a@x.example", "b@x.example"] });

describe("icsFacts", () => {
  it("reads UID, SEQUENCE and METHOD, unfolding folded lines", () => {
    expect(icsFacts(ics("mtg_1@faults.invalid", 2))).toEqual({ uid: "mtg_1@faults.invalid", sequence: 2, method: "REQUEST" });
    expect(icsFacts("METHOD:CANCEL\r\nUID:mtg_1234567890\r\n abc@faults.invalid\r\nSEQUENCE:3\r\n")).toEqual({ uid: "mtg_1234567890abc@faults.invalid", sequence: 3, method: "CANCEL" });
  });

  it("gives nothing when a part is missing or the sequence is not a number", () => {
    expect(icsFacts("METHOD:REQUEST\r\nUID:u\r\n")).toBeUndefined();
    expect(icsFacts("METHOD:REQUEST\r\nUID:u\r\nSEQUENCE:two\r\n")).toBeUndefined();
  });
});

describe("checkInvites", () => {
  it("owes one request per participant per change and passes them when each came once", () => {
    const mails = ["a@x.example", "b@x.example"].flatMap((to) => [mail(to, "m1", 1), mail(to, "m2", 1), mail(to, "m2", 2)]);
    expect(checkInvites([owing("m1", 1), owing("m2", 2)], mails)).toEqual({ owed: 6, deliveredOnce: 6, lost: 0, doubled: 0, doubledSameMessageId: 0, unowed: 0, unreadable: 0 });
  });

  it("counts what never came as lost", () => {
    const check = checkInvites([owing("m1", 2)], [mail("a@x.example", "m1", 1), mail("b@x.example", "m1", 1)]);
    expect(check).toMatchObject({ owed: 4, deliveredOnce: 2, lost: 2 });
  });

  it("counts each copy beyond the first as doubled, and those that repeat the first's Message-ID", () => {
    const mails = [mail("a@x.example", "m1", 1, "<1@x>"), mail("a@x.example", "m1", 1, "<1@x>"), mail("a@x.example", "m1", 1, "<2@x>"), mail("b@x.example", "m1", 1, "<3@x>")];
    expect(checkInvites([owing("m1", 1)], mails)).toMatchObject({ deliveredOnce: 1, lost: 0, doubled: 2, doubledSameMessageId: 1 });
  });

  it("counts mails for a change, method or meeting not owed, and mails without an invite", () => {
    const mails = [mail("a@x.example", "m1", 1), mail("b@x.example", "m1", 1), mail("a@x.example", "m1", 2), mail("a@x.example", "m1", 1, undefined, "CANCEL"), mail("a@x.example", "gone", 1), { recipients: ["a@x.example"] }];
    expect(checkInvites([owing("m1", 1)], mails)).toMatchObject({ deliveredOnce: 2, unowed: 3, unreadable: 1 });
  });

  it("tells recipients apart by envelope, whatever their case", () => {
    const check = checkInvites([owing("m1", 1)], [{ recipients: ["A@X.example", "b@x.example"], ics: ics("m1", 1) }]);
    expect(check).toMatchObject({ owed: 2, deliveredOnce: 2 });
  });
});

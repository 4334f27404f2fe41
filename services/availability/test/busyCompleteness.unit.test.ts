import { describe, expect, it } from "vitest";
import { incompleteBusyOf } from "../src/domain/busyCompleteness.js";

const people = [
  { id: "usr_me", email: "Me@Example.com" },
  { id: "usr_bo", email: "bo@example.com" },
  { id: "usr_cy", email: "cy@example.com" },
];

describe("whose busy time may miss a calendar", () => {
  it("is nobody when every calendar answered", () => {
    expect(incompleteBusyOf(people, new Set(), new Map())).toEqual([]);
  });

  it("names each incomplete person in the order counted, lower-cased, with their missing providers once each", () => {
    const missing = new Map([
      ["usr_cy", ["microsoft", "caldav", "microsoft"] as const],
      ["usr_me", ["google"] as const],
    ]);
    expect(incompleteBusyOf(people, new Set(["usr_cy", "usr_me"]), missing)).toEqual([
      { email: "me@example.com", missingCalendars: ["google"] },
      { email: "cy@example.com", missingCalendars: ["microsoft", "caldav"] },
    ]);
  });

  it("names everyone with no provider when the calendars could not be asked at all", () => {
    expect(incompleteBusyOf(people, new Set(people.map((p) => p.id)), undefined)).toEqual(people.map((p) => ({ email: p.email.toLowerCase(), missingCalendars: [] })));
  });

  it("names a person counted twice once", () => {
    expect(incompleteBusyOf([...people, people[1]!], new Set(["usr_bo"]), new Map())).toEqual([{ email: "bo@example.com", missingCalendars: [] }]);
  });
});

import { describe, expect, it } from "vitest";
import { checkWrites, keyOfTitle, UPDATED_SUFFIX, type CreateRecord, type ExistingMeeting, type UpdateRecord } from "../domain/writes.js";

const accepted = (key: string, id: string): CreateRecord => ({ key, verdict: { kind: "accepted", id } });
const unknown = (key: string): CreateRecord => ({ key, verdict: { kind: "unknown" } });
const refused = (key: string): CreateRecord => ({ key, verdict: { kind: "refused", status: 400 } });
const meeting = (id: string, title: string): ExistingMeeting => ({ id, title });

describe("checkWrites", () => {
  it("passes every accepted create that exists once, with the meeting the client was given", () => {
    const check = checkWrites([accepted("k1", "m1"), accepted("k2", "m2")], [], [meeting("m1", "k1"), meeting("m2", `k2${UPDATED_SUFFIX}`)]);
    expect(check).toMatchObject({ creates: { accepted: 2, unknown: 0, refused: 0 }, lost: [], doubled: [], phantom: [] });
  });

  it("finds an accepted create that is missing, or exists only as another meeting", () => {
    const check = checkWrites([accepted("k1", "m1"), accepted("k2", "m2")], [], [meeting("m9", "k2")]);
    expect(check.lost).toEqual(["k1", "k2"]);
  });

  it("finds a key written twice, accepted or not", () => {
    const check = checkWrites([accepted("k1", "m1"), unknown("k2")], [], [meeting("m1", "k1"), meeting("m3", "k1"), meeting("m4", "k2"), meeting("m5", "k2")]);
    expect(check.doubled).toEqual(["k1", "k2"]);
  });

  it("allows an unknown create to exist once or not at all, and counts those written", () => {
    const check = checkWrites([unknown("k1"), unknown("k2")], [], [meeting("m1", "k1")]);
    expect(check).toMatchObject({ creates: { accepted: 0, unknown: 2, refused: 0 }, unknownButWritten: 1, lost: [], doubled: [], phantom: [] });
  });

  it("finds meetings of refused creates and of keys the client never sent", () => {
    const check = checkWrites([refused("k1")], [], [meeting("m1", "k1"), meeting("m2", "stranger")]);
    expect(check.phantom).toEqual(["k1", "stranger"]);
  });

  it("finds accepted updates the meeting does not carry and refused ones it does", () => {
    const updates: UpdateRecord[] = [
      { meetingId: "m1", verdict: { kind: "accepted", id: "m1" } },
      { meetingId: "m2", verdict: { kind: "accepted", id: "m2" } },
      { meetingId: "m3", verdict: { kind: "refused", status: 400 } },
      { meetingId: "m4", verdict: { kind: "unknown" } },
    ];
    const existing = [meeting("m1", `k1${UPDATED_SUFFIX}`), meeting("m2", "k2"), meeting("m3", `k3${UPDATED_SUFFIX}`), meeting("m4", "k4")];
    const check = checkWrites(["k1", "k2", "k3", "k4"].map((k, i) => accepted(k, `m${i + 1}`)), updates, existing);
    expect(check.updates).toEqual({ accepted: 2, refused: 1, unknown: 1 });
    expect(check.lostUpdates).toEqual(["m2"]);
    expect(check.phantomUpdates).toEqual(["m3"]);
  });

  it("reads a meeting's key from its title, updated or not", () => {
    expect(keyOfTitle("kill-meetings-00007")).toBe("kill-meetings-00007");
    expect(keyOfTitle(`kill-meetings-00007${UPDATED_SUFFIX}`)).toBe("kill-meetings-00007");
  });
});

import { MeUpdateBody, type WorkingHoursEntry } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKING_HOURS, checkWorkingHours, findOverlap, sortWorkingHours } from "../src/domain/workingHours.js";
import { thrown } from "@sched/testing";

const e = (day: WorkingHoursEntry["day"], start: string, end: string): WorkingHoursEntry => ({ day, start, end });

describe("working hours", () => {
  it("the default is Monday to Friday, 09:00–17:00", () => {
    expect(DEFAULT_WORKING_HOURS).toEqual(["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" })));
  });

  it("when a day has several windows that do not overlap, then they are accepted", () => {
    expect(findOverlap([e("monday", "09:00", "12:00"), e("monday", "13:00", "17:00"), e("tuesday", "09:00", "17:00")])).toBeUndefined();
  });

  it("when two windows only touch, then they do not overlap", () => {
    expect(findOverlap([e("monday", "09:00", "12:00"), e("monday", "12:00", "17:00")])).toBeUndefined();
  });

  it("when the same window appears on two days, then they do not overlap", () => {
    expect(findOverlap([e("monday", "09:00", "17:00"), e("tuesday", "09:00", "17:00")])).toBeUndefined();
  });

  it("when two windows of one day overlap, then the later entry is named with the earlier", () => {
    expect(findOverlap([e("monday", "09:00", "12:00"), e("tuesday", "10:00", "11:00"), e("monday", "11:59", "17:00")])).toEqual({ index: 2, overlaps: 0 });
  });

  it("when one window contains another, then they overlap", () => {
    expect(findOverlap([e("friday", "10:00", "11:00"), e("friday", "08:00", "18:00")])).toEqual({ index: 1, overlaps: 0 });
  });

  it("when an entry is repeated, then it overlaps itself", () => {
    expect(findOverlap([e("monday", "09:00", "17:00"), e("monday", "09:00", "17:00")])).toEqual({ index: 1, overlaps: 0 });
  });

  it("when entries overlap, then checking is 400 naming the entry", () => {
    const err = thrown(() => checkWorkingHours([e("monday", "09:00", "17:00"), e("monday", "16:00", "18:00")]));
    expect(err).toMatchObject({ code: "invalid_request", status: 400 });
    expect(err.details.param).toBe("workingHours[1]");
    expect(err.message).toContain("workingHours[1]");
  });

  it("when entries are accepted, then they are kept by weekday and start", () => {
    const given = [e("sunday", "10:00", "12:00"), e("monday", "13:00", "17:00"), e("monday", "08:00", "12:00"), e("wednesday", "09:00", "10:00")];
    expect(checkWorkingHours(given)).toEqual([e("monday", "08:00", "12:00"), e("monday", "13:00", "17:00"), e("wednesday", "09:00", "10:00"), e("sunday", "10:00", "12:00")]);
    expect(checkWorkingHours([])).toEqual([]);
  });

  it("sorting does not change the entries it is given", () => {
    const given = [e("friday", "09:00", "10:00"), e("monday", "09:00", "10:00")];
    sortWorkingHours(given);
    expect(given[0]!.day).toBe("friday");
  });

  describe("the contract's entry shape", () => {
    const parse = (workingHours: unknown) => MeUpdateBody.safeParse({ workingHours });
    it("when start is not before end, then it is refused", () => {
      expect(parse([e("monday", "17:00", "09:00")]).success).toBe(false);
      expect(parse([e("monday", "09:00", "09:00")]).success).toBe(false);
    });
    it("when a time does not exist, then it is refused", () => {
      expect(parse([e("monday", "09:00", "24:00")]).success).toBe(false);
      expect(parse([e("monday", "9:00", "17:00")]).success).toBe(false);
      expect(parse([{ day: "Monday", start: "09:00", end: "17:00" }]).success).toBe(false);
    });
    it("when an entry is valid, then it is taken", () => {
      expect(parse([e("sunday", "00:00", "23:59")]).success).toBe(true);
    });
  });
});

import { describe, expect, it } from "vitest";
import { grantsView, visibleUserIds, type ContactLink } from "../src/domain/visibility.js";

const U = { userId: "usr_U", email: "u@example.com" };
const P = { userId: "usr_P", email: "p@example.com" };

type Side = "none" | "contact" | "blocked";

function links(mine: Side, theirs: Side): ContactLink[] {
  const out: ContactLink[] = [];
  if (mine !== "none") out.push({ ownerUserId: U.userId, email: P.email, blocked: mine === "blocked" });
  if (theirs !== "none") out.push({ ownerUserId: P.userId, email: U.email, blocked: theirs === "blocked" });
  return out;
}

describe("who counts for the viewer", () => {
  // mine: the viewer's row for P; theirs: P's row for the viewer.
  it.each<[Side, Side, boolean]>([
    ["none", "none", false],
    ["contact", "none", true],
    ["none", "contact", true],
    ["contact", "contact", true],
    ["blocked", "none", false],
    ["none", "blocked", false],
    ["contact", "blocked", false],
    ["blocked", "contact", false],
    ["blocked", "blocked", false],
  ])("when the viewer's row is %s and P's row is %s, then P counts: %s", (mine, theirs, counts) => {
    expect(visibleUserIds(U, [P], links(mine, theirs))).toEqual(counts ? [P.userId] : []);
  });

  it("compares e-mails in their normal form", () => {
    const shouting = { userId: P.userId, email: " P@EXAMPLE.com " };
    expect(visibleUserIds({ ...U, email: "U@Example.com" }, [shouting], links("none", "contact"))).toEqual([P.userId]);
    expect(visibleUserIds(U, [shouting], links("contact", "none"))).toEqual([P.userId]);
  });

  it("never counts the viewer, lists each person once, and keeps the request's order", () => {
    const Q = { userId: "usr_Q", email: "q@example.com" };
    const rows: ContactLink[] = [
      { ownerUserId: U.userId, email: P.email, blocked: false },
      { ownerUserId: Q.userId, email: U.email, blocked: false },
      { ownerUserId: U.userId, email: U.email, blocked: false },
    ];
    expect(visibleUserIds(U, [Q, U, P, Q, P], rows)).toEqual([Q.userId, P.userId]);
  });

  it("does not let a row about someone else stand in for P", () => {
    const rows: ContactLink[] = [
      { ownerUserId: U.userId, email: "other@example.com", blocked: false },
      { ownerUserId: P.userId, email: "other@example.com", blocked: false },
    ];
    expect(visibleUserIds(U, [P], rows)).toEqual([]);
  });
});

describe("grants view", () => {
  it("is granted only by a row that is not blocked", () => {
    expect(grantsView(undefined)).toBe(false);
    expect(grantsView({ blocked: true })).toBe(false);
    expect(grantsView({ blocked: false })).toBe(true);
  });

  it("is refused when the viewer's own row blocks the owner", () => {
    expect(grantsView({ blocked: false }, { blocked: false })).toBe(true);
    expect(grantsView({ blocked: false }, { blocked: true })).toBe(false);
    expect(grantsView(undefined, { blocked: false })).toBe(false);
  });
});

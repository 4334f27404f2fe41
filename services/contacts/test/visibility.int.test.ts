import { contactsCreate, contactsGrantsView, contactsUpdate, contactsVisibility, type Contact, type Mode } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerFor, makeUser, startContacts, type ContactsHarness, type TestUser } from "./harness.js";

describe("visibility and view grants", () => {
  let h: ContactsHarness;
  beforeAll(async () => {
    h = await startContacts();
    // Names are not what these tests are about; a silent accounts keeps them fast.
    await h.accounts.silence();
  });
  afterAll(async () => h?.stop());

  const add = async (owner: TestUser, other: TestUser, mode: Mode = "test") => {
    const reply = await h.call(contactsCreate, { params: {}, query: {}, body: { email: other.email } }, callerFor(owner, mode));
    return reply.body as Contact;
  };
  const addBlocked = async (owner: TestUser, other: TestUser, mode: Mode = "test") => {
    const contact = await add(owner, other, mode);
    await h.call(contactsUpdate, { params: { id: contact.id }, query: {}, body: { blocked: true } }, callerFor(owner, mode));
  };
  const party = (u: TestUser) => ({ userId: u.userId, email: u.email });
  const visible = async (viewer: TestUser, others: TestUser[], mode: Mode = "test") =>
    (await h.call(contactsVisibility, { mode, viewer: party(viewer), others: others.map(party) })).visibleUserIds;

  it("counts a participant by the rule in both directions, a block by either side winning", async () => {
    const u = makeUser("Viewer");
    const mineOnly = makeUser();
    const theirsOnly = makeUser();
    const both = makeUser();
    const neither = makeUser();
    const iBlocked = makeUser();
    const theyBlockedMe = makeUser();
    const mineButTheyBlocked = makeUser();
    const theirsButIBlocked = makeUser();

    await add(u, mineOnly);
    await add(theirsOnly, u);
    await add(u, both);
    await add(both, u);
    await addBlocked(u, iBlocked);
    await addBlocked(theyBlockedMe, u);
    await add(u, mineButTheyBlocked);
    await addBlocked(mineButTheyBlocked, u);
    await add(theirsButIBlocked, u);
    await addBlocked(u, theirsButIBlocked);

    const everyone = [mineOnly, theirsOnly, both, neither, iBlocked, theyBlockedMe, mineButTheyBlocked, theirsButIBlocked];
    expect(await visible(u, everyone)).toEqual([mineOnly.userId, theirsOnly.userId, both.userId]);
  });

  it("unblocking restores visibility", async () => {
    const u = makeUser();
    const p = makeUser();
    const contact = await add(u, p);
    await h.call(contactsUpdate, { params: { id: contact.id }, query: {}, body: { blocked: true } }, callerFor(u));
    expect(await visible(u, [p])).toEqual([]);
    await h.call(contactsUpdate, { params: { id: contact.id }, query: {}, body: { blocked: false } }, callerFor(u));
    expect(await visible(u, [p])).toEqual([p.userId]);
  });

  it("looks only at the mode asked about", async () => {
    const u = makeUser();
    const p = makeUser();
    const q = makeUser();
    await add(u, p, "live");
    await add(q, u, "live");
    await addBlocked(u, q, "test");
    expect(await visible(u, [p, q], "test")).toEqual([]);
    expect(await visible(u, [p, q], "live")).toEqual([p.userId, q.userId]);
  });

  it("matches e-mails whatever their case, and never lists the viewer", async () => {
    const u = makeUser();
    const p = makeUser();
    await add(p, u);
    const shouting = { userId: p.userId, email: p.email.toUpperCase() };
    const reply = await h.call(contactsVisibility, { mode: "test", viewer: { userId: u.userId, email: u.email.toUpperCase() }, others: [shouting, party(u), shouting] });
    expect(reply.visibleUserIds).toEqual([p.userId]);
  });

  it("answers a full request with at most two queries, and refuses more than 100 others", async () => {
    const u = makeUser();
    const others = Array.from({ length: 100 }, () => makeUser());
    for (const other of others.slice(0, 5)) await add(u, other);
    for (const other of others.slice(5, 10)) await add(other, u);
    let queries = 0;
    const count = () => {
      queries += 1;
    };
    h.db.on("query", count);
    try {
      expect(await visible(u, others)).toHaveLength(10);
    } finally {
      h.db.off("query", count);
    }
    expect(queries).toBeGreaterThan(0);
    expect(queries).toBeLessThanOrEqual(2);

    const err = await h.failure(contactsVisibility, { mode: "test", viewer: party(u), others: [...others, makeUser()].map(party) });
    expect(err).toMatchObject({ code: "invalid_request", status: 400 });
  });

  it("answers an empty list of others with nobody", async () => {
    expect(await visible(makeUser(), [])).toEqual([]);
  });

  describe("grants-view", () => {
    const granted = async (owner: TestUser, viewerEmail: string, mode: Mode = "test") =>
      (await h.call(contactsGrantsView, { mode, owner: { userId: owner.userId }, viewerEmail })).granted;

    it("is granted when the owner has the viewer as a contact he has not blocked", async () => {
      const owner = makeUser();
      const viewer = makeUser();
      await add(owner, viewer);
      expect(await granted(owner, viewer.email)).toBe(true);
      expect(await granted(owner, ` ${viewer.email.toUpperCase()} `)).toBe(true);
    });

    it("is refused when the owner blocked the viewer, has no row for him, or only in the other mode", async () => {
      const owner = makeUser();
      const blocked = makeUser();
      const stranger = makeUser();
      const liveOnly = makeUser();
      await addBlocked(owner, blocked);
      await add(owner, liveOnly, "live");
      expect(await granted(owner, blocked.email)).toBe(false);
      expect(await granted(owner, stranger.email)).toBe(false);
      expect(await granted(owner, liveOnly.email, "test")).toBe(false);
      expect(await granted(owner, liveOnly.email, "live")).toBe(true);
    });

    it("is not granted by the viewer listing the owner", async () => {
      const owner = makeUser();
      const viewer = makeUser();
      await add(viewer, owner);
      expect(await granted(owner, viewer.email)).toBe(false);
    });

    describe("with the viewer named (a block by either side wins)", () => {
      const grantedBoth = async (owner: TestUser, viewer: TestUser, mode: Mode = "test") =>
        (
          await h.call(contactsGrantsView, {
            mode,
            owner: { userId: owner.userId, email: owner.email.toUpperCase() },
            viewerEmail: viewer.email,
            viewerUserId: viewer.userId,
          })
        ).granted;

      it("is granted when the owner lists the viewer and the viewer lists the owner unblocked, or not at all", async () => {
        const owner = makeUser();
        const mutual = makeUser();
        const oneWay = makeUser();
        await add(owner, mutual);
        await add(mutual, owner);
        await add(owner, oneWay);
        expect(await grantedBoth(owner, mutual)).toBe(true);
        expect(await grantedBoth(owner, oneWay)).toBe(true);
      });

      it("is refused when the viewer has blocked the owner, though the owner lists him", async () => {
        const owner = makeUser();
        const viewer = makeUser();
        await add(owner, viewer);
        await addBlocked(viewer, owner);
        expect(await grantedBoth(owner, viewer)).toBe(false);
        // Without the viewer named, only the owner's side is asked.
        expect(await granted(owner, viewer.email)).toBe(true);
      });

      it("is refused when the owner blocked the viewer or does not list him, whatever the viewer's row says", async () => {
        const owner = makeUser();
        const blocked = makeUser();
        const unlisted = makeUser();
        await addBlocked(owner, blocked);
        await add(blocked, owner);
        await add(unlisted, owner);
        expect(await grantedBoth(owner, blocked)).toBe(false);
        expect(await grantedBoth(owner, unlisted)).toBe(false);
      });

      it("looks at the viewer's block in the mode asked about only", async () => {
        const owner = makeUser();
        const viewer = makeUser();
        await add(owner, viewer, "test");
        await add(owner, viewer, "live");
        await addBlocked(viewer, owner, "live");
        expect(await grantedBoth(owner, viewer, "test")).toBe(true);
        expect(await grantedBoth(owner, viewer, "live")).toBe(false);
      });

      it("refuses a viewerUserId without the owner's e-mail", async () => {
        const owner = makeUser();
        const viewer = makeUser();
        const err = await h.failure(contactsGrantsView, { mode: "test", owner: { userId: owner.userId }, viewerEmail: viewer.email, viewerUserId: viewer.userId });
        expect(err).toMatchObject({ code: "invalid_request", status: 400 });
        expect(err.details.param).toBe("owner.email");
      });
    });
  });
});

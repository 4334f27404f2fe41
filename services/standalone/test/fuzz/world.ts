import { ADMIN_TOKEN, call, createUserWithKey } from "../harness.js";

/** Who a request speaks as: a user in one mode. Meetings and contacts belong to one mode; connections, keys and users to the user. */
export interface Principal {
  user: "a" | "b" | "c";
  mode: "test" | "live";
}

/** Every key the fuzz may present, and what it stands for. */
interface FuzzKeys {
  aTest: string;
  aLive: string;
  /** Test mode, `meetings:read` and `contacts:read` only. */
  aReadOnly: string;
  revoked: string;
  admin: string;
}

/**
 * The data the fuzz runs against: user A, whose keys the requests carry, and
 * user B, whose ids and e-mail they name; B never trusts A. `owners` says who
 * owns each id, so an answer naming one the caller may not see is caught;
 * objects the fuzz itself creates are added as they appear.
 */
export interface FuzzWorld {
  url: string;
  keys: FuzzKeys;
  /** Known ids by prefix (`mtg`, `ctc`, `cal`, `key`, `usr`): A's, B's and throw-away ones the admin routes may change. */
  ids: Record<string, string[]>;
  /** Ids the admin routes may change without spoiling A's keys or account. */
  adminIds: Record<string, string[]>;
  emails: { a: string; b: string; contact: string };
  owners: Map<string, Principal>;
}

const SEED_MEETING = { title: "Seed", duration: "30 mins", startTime: "2030-03-04T10:00:00Z", participants: ["guest@example.com"] };

async function created(what: string, response: Promise<{ status: number; body: { id?: string } }>): Promise<string> {
  const res = await response;
  if (res.status !== 201 || typeof res.body?.id !== "string") throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Seeds A and B, each with a meeting, a contact and a time off in both modes; B with a calendar connection; a revoked key and a throw-away user. */
export async function seedWorld(url: string): Promise<FuzzWorld> {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const aTest = await createUserWithKey(url, { name: "Fuzz A", timezone: "Europe/Berlin" });
  const aLive = await createAdditionalKey(url, aTest.userId, "live");
  const aReadOnly = await createAdditionalKey(url, aTest.userId, "test", ["meetings:read", "contacts:read"]);
  const bTest = await createUserWithKey(url, { name: "Fuzz B", timezone: "Pacific/Kiritimati" });
  const bLive = await createAdditionalKey(url, bTest.userId, "live");
  const c = await createUserWithKey(url, { name: "Fuzz C" });
  const revoked = await createAdditionalKey(url, c.userId, "test");
  const revokedAnswer = await call(url, "DELETE", `/admin/v1/api-keys/${revoked.keyId}`, { headers: admin });
  if (revokedAnswer.status !== 200) throw new Error(`key revoke failed: ${JSON.stringify(revokedAnswer.body)}`);

  const owners = new Map<string, Principal>();
  const ids: Record<string, string[]> = { mtg: [], ctc: [], off: [], cal: [], key: [], usr: [] };
  const own = (id: string, principal: Principal) => {
    owners.set(id, principal);
    ids[id.slice(0, 3)]!.push(id);
  };
  own(aTest.userId, { user: "a", mode: "test" });
  own(bTest.userId, { user: "b", mode: "test" });
  own(aTest.keyId, { user: "a", mode: "test" });
  own(aLive.keyId, { user: "a", mode: "live" });
  own(bTest.keyId, { user: "b", mode: "test" });
  own(bLive.keyId, { user: "b", mode: "live" });
  const seeds: Array<[string, "a" | "b", "test" | "live"]> = [
    [aTest.key, "a", "test"],
    [aLive.key, "a", "live"],
    [bTest.key, "b", "test"],
    [bLive.key, "b", "live"],
  ];
  for (const [key, user, mode] of seeds) {
    own(await created("meeting", call(url, "POST", "/v1/meetings", { key, body: SEED_MEETING })), { user, mode });
    own(await created("contact", call(url, "POST", "/v1/contacts", { key, body: { email: "contact@example.com" } })), { user, mode });
    own(await created("time off", call(url, "POST", "/v1/me/time-off", { key, body: { start: "2030-03-04", end: "2030-03-04", reason: "Fuzz" } })), { user, mode });
  }
  const connection = await created(
    "calendar connection",
    call(url, "POST", `/admin/v1/users/${bTest.userId}/calendar-connections`, {
      headers: admin,
      body: { provider: "google", accountEmail: bTest.email, accessToken: "ya29.fuzz", refreshToken: "1//fuzz" },
    }),
  );
  own(connection, { user: "b", mode: "test" });
  return {
    url,
    keys: { aTest: aTest.key, aLive: aLive.key, aReadOnly: aReadOnly.key, revoked: revoked.key, admin: ADMIN_TOKEN },
    ids,
    adminIds: { usr: [bTest.userId, c.userId], key: [c.keyId, revoked.keyId] },
    emails: { a: aTest.email, b: bTest.email, contact: "contact@example.com" },
    owners,
  };
}

async function createAdditionalKey(url: string, userId: string, mode: "test" | "live", scopes?: string[]): Promise<{ key: string; keyId: string }> {
  const res = await call(url, "POST", `/admin/v1/users/${userId}/api-keys`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { mode, ...(scopes ? { scopes } : {}) },
  });
  if (res.status !== 201) throw new Error(`key create failed: ${JSON.stringify(res.body)}`);
  return { key: res.body.key, keyId: res.body.id };
}

/** Whether `caller` may see an object `owner` owns: the same user, and for meetings, contacts and time off the same mode. */
export function maySee(caller: Principal, owner: Principal, id: string): boolean {
  if (caller.user !== owner.user) return false;
  return !(id.startsWith("mtg_") || id.startsWith("ctc_") || id.startsWith("off_")) || caller.mode === owner.mode;
}

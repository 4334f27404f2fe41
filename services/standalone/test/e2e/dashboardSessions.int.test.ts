import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, startTestSystem, systemPerSuite, WIRINGS } from "../harness.js";

/** Half a minute: the setting takes fractions, so the test waits seconds, not minutes. */
const IDLE_MINUTES = 0.5;
const IDLE_MS = IDLE_MINUTES * 60_000;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** The last Set-Cookie of a name (an answer may clear a cookie before setting it anew), its attributes lower-cased. */
function setCookie(res: Response, name: string): { value: string; attributes: string[] } | undefined {
  const header = res.headers.getSetCookie().findLast((c) => c.startsWith(`${name}=`));
  if (!header) return undefined;
  const [pair, ...attributes] = header.split(";").map((p) => p.trim());
  return { value: pair!.slice(name.length + 1), attributes: attributes.map((a) => a.toLowerCase()) };
}

/**
 * Signs in as a browser would, without one: opens the link's page (which sets
 * the pre-session cookie and carries its token), then presses Sign in.
 * Returns the answer that sets the session cookie.
 */
async function signIn(apiUrl: string, dashboard: string, userId: string, headers: Record<string, string> = {}): Promise<Response> {
  const link = await call(apiUrl, "POST", `/admin/v1/users/${userId}/sign-in-links`, { headers: admin });
  expect(link.status).toBe(201);
  const token = new URL(link.body.url as string).searchParams.get("token")!;
  const opened = await fetch(`${dashboard}/sign-in?token=${encodeURIComponent(token)}`, { headers });
  expect(opened.status).toBe(200);
  const preSession = setCookie(opened, "sched_presession")!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await opened.text())![1]!;
  const signedIn = await fetch(`${dashboard}/sign-in/link`, {
    method: "POST",
    headers: { ...headers, Cookie: `sched_presession=${preSession.value}`, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, token }),
    redirect: "manual",
  });
  expect(signedIn.status).toBe(303);
  return signedIn;
}

const keysPage = (dashboard: string, session: string) => fetch(`${dashboard}/keys`, { headers: { Cookie: `sched_session=${session}` }, redirect: "manual" });

describe.each(WIRINGS)("dashboard sessions in the running service (%s)", async (wiring) => {
  // Behind a proxy on this machine: it says whether the browser came over TLS.
  const suite = await systemPerSuite(wiring, () => startTestSystem(wiring, {}, { dashboard: { DASHBOARD_IDLE_MINUTES: String(IDLE_MINUTES), TRUST_PROXY: "loopback" } }));

  it.runIf(suite.available)("marks the session cookie Secure when the request came over TLS through the trusted proxy, and only then", async () => {
    const { userId } = await createUserWithKey(suite.url);
    const dashboard = suite.sys.system.dashboardUrl;
    const overTls = setCookie(await signIn(suite.url, dashboard, userId, { "X-Forwarded-Proto": "https" }), "sched_session")!;
    expect(overTls.attributes).toEqual(expect.arrayContaining(["secure", "httponly", "samesite=lax", "path=/dashboard"]));
    const plain = setCookie(await signIn(suite.url, dashboard, userId), "sched_session")!;
    expect(plain.attributes).not.toContain("secure");
    expect(plain.attributes).toEqual(expect.arrayContaining(["httponly", "samesite=lax"]));
  });

  it.runIf(suite.available)("keeps a session in use past the idle time, and ends one left unused for it", { timeout: 5 * IDLE_MS }, async () => {
    const dashboard = suite.sys.system.dashboardUrl;
    // Two people sign in at once: one goes on using the dashboard, the other leaves it alone.
    const busy = await createUserWithKey(suite.url);
    const away = await createUserWithKey(suite.url);
    const inUse = setCookie(await signIn(suite.url, dashboard, busy.userId), "sched_session")!.value;
    const leftAlone = setCookie(await signIn(suite.url, dashboard, away.userId), "sched_session")!.value;
    expect((await keysPage(dashboard, leftAlone)).status).toBe(200);
    const lastUseAlone = Date.now();

    // The one in use, every few seconds for longer than the idle time, goes on; meanwhile
    // the one left alone for the idle time ends: the next request finds it gone from the store.
    let endedAlone: Response | undefined;
    const start = Date.now();
    while (Date.now() - start < IDLE_MS + 10_000) {
      expect((await keysPage(dashboard, inUse)).status).toBe(200);
      if (!endedAlone && Date.now() - lastUseAlone > IDLE_MS + 1_000) endedAlone = await keysPage(dashboard, leftAlone);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    endedAlone ??= await keysPage(dashboard, leftAlone);
    expect(endedAlone.status).toBe(303);
    expect(endedAlone.headers.get("location")).toBe("/dashboard/sign-in");
    expect(await suite.sys.system.database("dashboard")("sessions").where({ user_id: away.userId })).toEqual([]);
    expect((await keysPage(dashboard, inUse)).status).toBe(200);
  });
});

describe("dashboard sessions where the dashboard's address is https", async () => {
  const suite = await systemPerSuite("standalone", () => startTestSystem("standalone", {}, { dashboard: { DASHBOARD_URL: "https://dashboard.example.test/dashboard" } }));

  it.runIf(suite.available)("marks every cookie it sets Secure, whatever the request's scheme", async () => {
    const { userId } = await createUserWithKey(suite.url);
    const dashboard = suite.sys.system.dashboardUrl;
    const opened = await fetch(`${dashboard}/sign-in`);
    expect(setCookie(opened, "sched_presession")!.attributes).toContain("secure");
    const session = setCookie(await signIn(suite.url, dashboard, userId), "sched_session")!;
    expect(session.attributes).toEqual(expect.arrayContaining(["secure", "httponly", "samesite=lax", "path=/dashboard"]));
    expect((await keysPage(dashboard, session.value)).status).toBe(200);
  });
});

import { eventually } from "@sched/testing";
import { SmtpFake } from "@sched/testing/smtp";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, startTestSystem, systemPerSuite, WIRINGS } from "../harness.js";

/** A browser's visit without a browser: the pre-session cookie and the form's token of the sign-in page. */
async function signInForm(dashboard: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${dashboard}/sign-in`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("sched_presession="))!.split(";")[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await res.text())![1]!;
  return { cookie, csrf };
}

describe.each(WIRINGS)("dashboard sign-up by e-mail and the sign-in limits (%s)", async (wiring) => {
  const smtp = new SmtpFake();
  const suite = await systemPerSuite(wiring, async () => startTestSystem(wiring, {}, { dashboard: { DASHBOARD_SIGNUP: "true", SMTP_URL: await smtp.start() } }));
  afterAll(() => smtp.stop());
  const askForLink = async (form: { cookie: string; csrf: string }, email: string) =>
    fetch(`${suite.sys.system.dashboardUrl}/sign-in/email`, {
      method: "POST",
      headers: { Cookie: form.cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: form.csrf, email }).toString(),
    });

  it.runIf(suite.available)("signs a new address up and e-mails it a link that signs it in; a form without its token is refused", async () => {
    const dashboard = suite.sys.system.dashboardUrl;
    const form = await signInForm(dashboard);
    const email = `new-${Date.now()}@example.com`;
    const forged = await askForLink({ ...form, csrf: "csrf_forged" }, email);
    expect(forged.status).toBe(403);
    const asked = await askForLink(form, email);
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain("a link is on its way");
    const mail = await eventually(() => smtp.to(email)[0], 30_000, 100);
    const link = /(http:\/\/\S+\/dashboard\/sign-in\?token=sil_[0-9A-Za-z]+)/.exec(String(mail.mail.text))![1]!;
    expect(link.startsWith(`${dashboard}/sign-in`)).toBe(true);
    const confirm = await fetch(link);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain(email);
    const found = await call(suite.url, "GET", `/admin/v1/users?email=${encodeURIComponent(email)}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(found.body.data).toEqual([expect.objectContaining({ email, name: email.split("@")[0] })]);
  });

  it.runIf(suite.available)("sends one e-mail address at most 5 links in 15 minutes, and takes at most 30 attempts from one address", async () => {
    const form = await signInForm(suite.sys.system.dashboardUrl);
    const email = `limited-${Date.now()}@example.com`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await askForLink(form, email)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    await eventually(() => smtp.to(email).length === 5 || undefined, 30_000, 100);

    // The attempts of the first test and these six count for this address too; the 31st in the window is refused.
    const more: number[] = [];
    for (let i = 0; i < 30 && !more.includes(429); i++) more.push((await askForLink(form, `other-${i}-${Date.now()}@example.com`)).status);
    expect(more.at(-1)).toBe(429);
    expect(more.slice(0, -1).every((s) => s === 200)).toBe(true);
    expect(more.length).toBeLessThan(30);
    expect(smtp.to(email)).toHaveLength(5);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeMicrosoft } from "@sched/testing/microsoft";
import { MicrosoftCalendar } from "../src/outbound/microsoft.js";
import type { ProviderTokens } from "../src/domain/tokenCipher.js";

describe("Microsoft Graph client against the loopback identity platform and Graph", () => {
  const fake = new FakeMicrosoft();
  let microsoft: MicrosoftCalendar;

  beforeAll(async () => {
    const url = await fake.start();
    microsoft = new MicrosoftCalendar({ clientId: fake.clientId, clientSecret: fake.clientSecret, redirectUrl: "http://localhost/cb", authority: `${url}/common`, graphUrl: url, timeoutMs: 5_000 });
  });
  afterAll(() => fake.stop());

  it("creates an event once per transactionId, refreshing an expired token first", async () => {
    const grant = fake.grant("a@contoso.example", { accessExpiresInMs: -1 });
    const refreshed: ProviderTokens[] = [];
    const { graph } = microsoft.session(grant, (t) => refreshed.push(t));
    const body = { subject: "S", start: { dateTime: "2031-01-01T10:00:00", timeZone: "UTC" }, end: { dateTime: "2031-01-01T11:00:00", timeZone: "UTC" }, attendees: [{ emailAddress: { address: "x@example.com" } }], transactionId: "sched-t1" };
    const first = (await graph.api("/me/events").post(body)) as { id: string };
    const again = (await graph.api("/me/events").post(body)) as { id: string };
    expect(again.id).toBe(first.id);
    expect(refreshed).toHaveLength(1);
    expect(fake.graphCalls().at(-1)!.accessToken).toBe(refreshed[0]!.accessToken);
  });

  it("reports a revoked grant as revoked", async () => {
    const grant = fake.grant("b@contoso.example", { accessExpiresInMs: -1 });
    fake.revoke(grant.refreshToken);
    const session = microsoft.session(grant, () => {});
    const err = await session.graph.api("/me/events").post({}).catch((e: unknown) => e);
    expect(session.failureOf(err).kind).toBe("revoked");
  });
});

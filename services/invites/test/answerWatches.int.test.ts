import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { createTestDatabase, eventually } from "@sched/testing";
import { FakeMicrosoft } from "@sched/testing/microsoft";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionById, saveProviderEvent, upsertConnection } from "../src/db/queries.js";
import { keepAnswerWatches, stopAnswerWatch } from "../src/outbound/answerWatches.js";
import { GoogleCalendar } from "../src/outbound/google.js";
import { MicrosoftCalendar } from "../src/outbound/microsoft.js";
import { ConnectionVault } from "../src/outbound/vault.js";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

const PUBLIC_BASE = "https://sched.test";

/** Graph subscriptions kept by replicas of the invites, against the fake Graph, with a loopback address answering its handshake. */
describe("push channels of Microsoft calendars", () => {
  const logger = createLogger({ name: "invites-answer-watches-test", level: "silent" });
  const microsoft = new FakeMicrosoft();
  let db: Knex;
  let drop: () => Promise<void>;
  let vault: ConnectionVault;
  let handshakes: Server;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
    const url = await microsoft.start();
    const calendar = new MicrosoftCalendar({ clientId: microsoft.clientId, clientSecret: microsoft.clientSecret, redirectUrl: "http://localhost/cb", authority: `${url}/common`, graphUrl: url, timeoutMs: 5_000 });
    const google = new GoogleCalendar({ redirectUrl: "http://localhost/", apiRootUrl: "http://127.0.0.1:9/", authUrl: "http://127.0.0.1:9/", tokenUrl: "http://127.0.0.1:9/", timeoutMs: 1_000 });
    vault = new ConnectionVault(db, new TokenCipher(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")), google, logger, false, calendar);
    // The notification route's handshake, as the API answers it.
    handshakes = createServer((req, res) => {
      const token = new URL(req.url ?? "/", "http://localhost").searchParams.get("validationToken");
      if (token === null) return void res.writeHead(202).end();
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(token);
    });
    await new Promise<void>((resolve) => handshakes.listen(0, "127.0.0.1", resolve));
    microsoft.fronts.set(PUBLIC_BASE, `http://127.0.0.1:${(handshakes.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await microsoft.stop();
    await new Promise((resolve) => handshakes.close(resolve));
    await db?.destroy();
    await drop?.();
  });

  it("opens one subscription a connection however many replicas check, extends it near its lapse, and deletes it with the connection", async () => {
    const grant = microsoft.grant("watched@contoso.example");
    const connection = await upsertConnection(db, { id: "cal_watched00000000000000000", userId: "usr_watched", provider: "microsoft", accountEmail: grant.accountEmail }, (id) =>
      vault.tokenCipher.seal({ accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: grant.expiresAt }, id),
    );
    await saveProviderEvent(db, "mtg_watched", connection.id, "AAMkAGwatched");
    const settings = { publicBaseUrl: PUBLIC_BASE, checkMs: 100, providers: ["microsoft"] as const };
    const replicas = [keepAnswerWatches(db, vault, logger, settings), keepAnswerWatches(db, vault, logger, settings)];
    try {
      const stored = await eventually(async () => (await db("answer_watches").where({ connection_id: connection.id }).whereNotNull("channel_id").first()) as { channel_id: string; expires_at: Date; secret_hash: string } | undefined, 10_000, 50);
      await new Promise((r) => setTimeout(r, 500));
      expect(microsoft.subscriptions.size).toBe(1);
      const subscription = microsoft.subscriptions.get(stored.channel_id)!;
      expect(subscription.account).toBe("watched@contoso.example");
      // Only the secret's hash is kept.
      expect(stored.secret_hash).not.toBe(subscription.clientState);
      expect(stored.expires_at.getTime()).toBeGreaterThan(Date.now() + 2 * 86_400_000);

      const soon = new Date(Date.now() + 10 * 60_000);
      await db("answer_watches").where({ connection_id: connection.id }).update({ expires_at: soon });
      await eventually(async () => ((await db("answer_watches").where({ connection_id: connection.id }).first()) as { expires_at: Date }).expires_at.getTime() > Date.now() + 86_400_000, 10_000, 50);
      expect(microsoft.graphCalls().filter((c) => c.method === "PATCH" && c.path === `/v1.0/subscriptions/${stored.channel_id}`)).toHaveLength(1);
      expect(microsoft.subscriptions.size).toBe(1);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
    await stopAnswerWatch(db, vault, (await connectionById(db, connection.id))!, logger);
    expect(microsoft.subscriptions.size).toBe(0);
    expect(await db("answer_watches").where({ connection_id: connection.id }).first()).toBeUndefined();
  });
});

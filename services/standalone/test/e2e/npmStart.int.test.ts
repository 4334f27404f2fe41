import { eventually, freePort } from "@sched/testing";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { DateTime } from "luxon";
import { expect, it } from "vitest";
import { FakeOpenAI } from "@sched/testing/openai";
import { ADMIN_TOKEN, call, createUserWithKey } from "../harness.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/** `npm start` as a newcomer runs it: the standalone entry point in a process of its own, on a free port. */
async function startEntryPoint(env: Record<string, string>): Promise<{ url: string; dataDir: string; output: () => string; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "sched-start-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/standalone/src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    child.kill("SIGTERM");
    if (child.exitCode === null) await once(child, "exit");
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // The banner is printed once the API answers and the data folder knows its address. Each of
    // the seven embedded databases compiles its own Postgres first: over a minute on a loaded machine.
    await eventually(() => {
      if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
      return output.includes("Admin command line");
    }, 180_000, 200);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, dataDir, output: () => output, stop };
}

it("npm start hands each part its settings from the environment: with OPENAI_API_KEY and AI_MODEL set, recommendations go through the language model, and the gateway's RATE_LIMIT_AI_PER_MINUTE holds", async () => {
  const fake = await new FakeOpenAI().start();
  const started = await startEntryPoint({ ADMIN_TOKEN, OPENAI_API_KEY: "sk-fake", OPENAI_BASE_URL: fake.baseURL, AI_MODEL: "fake-model", RATE_LIMIT_AI_PER_MINUTE: "1" });
  const { url } = started;
  try {
    // A line per start-up stage, with its time, before the banner.
    expect(started.output()).toMatch(/database ready \(\d+\.\d s\)\n.*schemas migrated \(\d+\.\d s\)\n.*services started \(\d+\.\d s\)\n.*gateway listening \(\d+\.\d s\)\nScheduling API \(standalone\) on/);
    const ana = await createUserWithKey(url, { name: "Ana", timezone: "UTC" });
    const bo = await createUserWithKey(url, { name: "Bo", timezone: "UTC" });
    expect((await call(url, "POST", "/v1/contacts", { key: ana.key, body: { email: bo.email } })).status).toBe(201);
    const nextMonday = DateTime.utc().startOf("week").plus({ weeks: 1 });
    const body = { participants: [bo.email], duration: "1 hour", from: nextMonday.toISODate(), to: nextMonday.plus({ days: 4 }).toISODate(), limit: 5, useAI: true };
    const ranked = await call(url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(ranked.status).toBe(200);
    expect(ranked.body.rankedBy).toBe("ai");
    expect(fake.bodies).toHaveLength(1);
    expect(JSON.parse(fake.bodies[0]!).model).toBe("fake-model");
    const overLimit = await call(url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(overLimit.status).toBe(429);
    expect(fake.bodies).toHaveLength(1);
  } finally {
    await started.stop();
    await fake.stop();
  }
}, 240_000);

it("the admin command line finds a local npm start on any port through its data folder, with no API_URL or ADMIN_TOKEN set; the first start prints the demo user's dashboard sign-in link", async () => {
  const started = await startEntryPoint({});
  try {
    const link = /(http:\/\/localhost:\d+\/dashboard\/sign-in\?token=sil_[0-9A-Za-z]+)/.exec(started.output())?.[1];
    expect(link).toBeDefined();
    const page = await fetch(link!.replace("localhost", "127.0.0.1"));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("demo@example.com");
    expect(readFileSync(join(started.dataDir, "api-url"), "utf8").trim()).toBe(started.url.replace("127.0.0.1", "localhost"));
    const { API_URL: _url, ADMIN_TOKEN: _token, ...env } = process.env;
    const admin = await promisify(execFile)(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/accounts/src/cli.ts", "user:create", "--email", "cli@example.com", "--name", "Cli"], {
      cwd: ROOT,
      env: { ...env, DATA_DIR: started.dataDir },
    });
    expect(JSON.parse(admin.stdout)).toMatchObject({ email: "cli@example.com", name: "Cli" });
  } finally {
    await started.stop();
  }
}, 240_000);

it("npm start refuses a data folder of the earlier layout, one database per service, saying what to do, and leaves it as it was", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "sched-old-"));
  try {
    mkdirSync(join(dataDir, "accounts"));
    writeFileSync(join(dataDir, "accounts", "PG_VERSION"), "17\n");
    const refused = await promisify(execFile)(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/standalone/src/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(await freePort()), DATA_DIR: dataDir },
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain("Move that folder away (or set DATA_DIR to another one)");
    expect(readdirSync(dataDir)).toEqual(["accounts"]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);

import { createSchedulingClient, type components } from "@sched/client";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createUserWithKey, documentedFetch, perSuite, startTestSystem, WIRINGS, type TestSystem } from "../harness.js";
import { weekdayIn } from "../days.js";

type Meeting = components["schemas"]["Meeting"];

describe.each(WIRINGS)("the typed client generated from the OpenAPI document (%s)", async (wiring) => {
  let sys: TestSystem;
  const { available } = await perSuite(wiring, async () => (sys = await startTestSystem(wiring)));

  it.runIf(available)("creates a meeting, finds it in the list, updates it and reads it back", async () => {
    const org = await createUserWithKey(sys.url, { timezone: "Europe/Berlin" });
    // Every answer the client receives is also checked against the document.
    const client = createSchedulingClient({ baseUrl: sys.url, apiKey: org.key, fetch: documentedFetch });

    const created = await client.POST("/v1/meetings", {
      params: { header: { "Idempotency-Key": `client-${Date.now()}` } },
      body: { title: "Typed planning", duration: "45 mins", startTime: "2031-05-06T10:00:00", participants: ["Guest@Example.com"] },
    });
    expect(created.response.status).toBe(201);
    const meeting: Meeting = created.data!;
    expect(meeting).toMatchObject({ title: "Typed planning", startTime: "2031-05-06T08:00:00Z", participants: ["guest@example.com"], status: "confirmed", organizer: org.email });

    const listed = await client.GET("/v1/meetings", { params: { query: { filter: "upcoming", limit: 10 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data!.data.map((m) => m.id)).toEqual([meeting.id]);
    expect(listed.data!.hasMore).toBe(false);

    const updated = await client.PATCH("/v1/meetings/{id}", {
      params: { path: { id: meeting.id } },
      body: { title: "Typed planning, moved", startTime: "2031-05-07T09:30:00Z", sendInvites: false },
    });
    expect(updated.response.status).toBe(200);
    expect(updated.data).toMatchObject({ id: meeting.id, title: "Typed planning, moved", startTime: "2031-05-07T09:30:00Z", duration: "45 mins" });

    const read = await client.GET("/v1/meetings/{id}", { params: { path: { id: meeting.id } } });
    expect(read.data).toEqual(updated.data);
  });

  it.runIf(available)("runs the package's quickstart example as written", async () => {
    const { key } = await createUserWithKey(sys.url, { timezone: "UTC" });
    const clientDir = fileURLToPath(new URL("../../../../libs/client/", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "examples/quickstart.ts"], {
      cwd: clientDir,
      env: { ...process.env, SCHED_API_URL: sys.url, SCHED_API_KEY: key },
    });
    // The example's day: the first weekday after today, as the day view shows working hours Monday to Friday.
    const workday = weekdayIn(1);
    expect(stdout).toMatch(new RegExp(`^created mtg_\\w{24} ${workday}T10:00:00Z$`, "m"));
    expect(stdout).toContain(`upcoming [ '${workday}T10:00:00Z Quickstart' ]`);
    expect(stdout).toMatch(/^workday .*10:00-10:30 busy/m);
  });

  it.runIf(available)("gives the documented error envelope as a typed error", async () => {
    const { key } = await createUserWithKey(sys.url);
    const client = createSchedulingClient({ baseUrl: sys.url, apiKey: key, fetch: documentedFetch });

    const missing = await client.PATCH("/v1/meetings/{id}", { params: { path: { id: "mtg_000000000000000000000000" } }, body: { title: "x" } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe("not_found");

    const invalid = await client.POST("/v1/meetings", {
      // @ts-expect-error "20 mins" is not a duration of the document, so the client refuses to compile it.
      body: { title: "x", duration: "20 mins", startTime: "2031-05-06T10:00:00Z", participants: ["a@example.com"] },
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error).toMatchObject({ error: { code: "invalid_request", param: "duration" } });
  });
});

import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { aiRankingRank } from "@sched/proto";
import { startTelemetry } from "@sched/telemetry";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeOpenAI, SLOW_ANSWER_MS, type Behaviour } from "@sched/testing/openai";
import { AiRankingHarness, makePerson } from "./harness.js";
import { DAY, HOUR, MONDAY, NOW, slot } from "./people.js";
// Long enough for a loopback answer on a busy machine (a good answer missing it would count as a failure and open the
// circuit for the tests after it), and well short of the slow answer (SLOW_ANSWER_MS).
const MODEL_DEADLINE_MS = 2_500;

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
await startTelemetry({ serviceName: "ai-ranking-model-test", spanProcessors: [processor] });
/** The attributes ai-ranking put on the span of its last rank request. */
async function lastRankSpan(): Promise<Record<string, unknown>> {
  await processor.forceFlush();
  const served = exporter.getFinishedSpans().filter((s) => s.name === aiRankingRank.subject);
  return { ...served.at(-1)!.attributes };
}
const TITLE = "Acquisition of Initech";

describe("the language model on top of the statistical ranking, against an OpenAI-compatible server", () => {
  let fake: FakeOpenAI;
  let h: AiRankingHarness;
  const ana = makePerson("Ana");
  const bo = makePerson("Bo");
  const candidates = [slot(1, 10), slot(2, 15), slot(3, 9), slot(4, 16)];

  beforeAll(async () => {
    fake = await new FakeOpenAI().start();
    h = await AiRankingHarness.start({
      now: () => NOW,
      env: { OPENAI_API_KEY: "sk-fake", OPENAI_BASE_URL: fake.baseURL, AI_MODEL: "fake-model", AI_MODEL_TIMEOUT_MS: String(MODEL_DEADLINE_MS) },
    });
    await h.account(ana);
    await h.account(bo);
    for (let w = 1; w <= 8; w++) await h.meeting(ana, [bo], MONDAY - w * 7 * DAY + DAY + 10 * HOUR, { title: TITLE });
    await eventually(async () => (await h.db("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings === 8);
  });
  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  async function rankWith(behaviour: Behaviour) {
    fake.behaviour = behaviour;
    const asked = fake.bodies.length;
    const started = performance.now();
    const { scores } = await h.bus.request(aiRankingRank, {
      mode: "test",
      callerUserId: ana.userId,
      people: [{ userId: ana.userId, timezone: ana.timezone }, { userId: bo.userId, timezone: bo.timezone }],
      candidates,
    });
    return { scores, elapsed: performance.now() - started, reachedServer: fake.bodies.length > asked };
  }

  /** What the statistical model alone answers: Tuesday 10:00, the pair's habit, first, with its reason. */
  function expectStatistical(scores: Array<{ start: string; score: number; reason: string }>) {
    expect(scores).toHaveLength(candidates.length);
    expect(scores[0]!.start).toBe(candidates[0]!.start);
    expect(scores[0]!.reason).toMatch(/^Tuesday mornings are when you and Bo usually meet/);
    for (const s of scores) expect(s.score).toBeGreaterThanOrEqual(0);
    for (const s of scores) expect(s.score).toBeLessThanOrEqual(1);
  }

  it("takes a good answer: the model's order and reasons, labels turned back into names", async () => {
    const { scores, reachedServer } = await rankWith("good");
    expect(reachedServer).toBe(true);
    expect(scores).toHaveLength(candidates.length);
    // The fake reverses the statistical order it was shown.
    expect(scores[0]!.start).not.toBe(candidates[0]!.start);
    expect(scores.at(-1)!.start).toBe(candidates[0]!.start);
    expect(scores[0]!.reason).toMatch(/^The model prefers this for you and Bo \(S\d\)\.$/);
    const values = scores.map((s) => s.score);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    for (const v of values) expect(v >= 0 && v <= 1).toBe(true);

    const sent = JSON.parse(fake.bodies.at(-1)!) as { model: string; response_format: { type: string; json_schema: { name: string } } };
    expect(sent.model).toBe("fake-model");
    expect(sent.response_format.type).toBe("json_schema");
    expect(sent.response_format.json_schema.name).toBe("slot_ranking");
    expect(await lastRankSpan()).toMatchObject({ "sched.ai.ranked_by": "model" });
    expect(await lastRankSpan()).not.toHaveProperty("sched.ai.fallback_reason");
  });

  it("lets the model reorder only the slots inside everyone's working hours: those outside someone's stay below", async () => {
    fake.behaviour = "good";
    // Tuesday 10:00 and Wednesday 15:00 lie inside both people's hours; Thursday and Friday only inside Ana's.
    const tiered = candidates.map((c, i) => ({ ...c, withinWorkingHours: i < 2 ? [ana.userId, bo.userId] : [ana.userId] }));
    const { scores } = await h.bus.request(aiRankingRank, {
      mode: "test",
      callerUserId: ana.userId,
      people: [{ userId: ana.userId, timezone: ana.timezone }, { userId: bo.userId, timezone: bo.timezone }],
      candidates: tiered,
    });
    const sent = JSON.parse(fake.bodies.at(-1)!) as { messages: Array<{ role: string; content: string }> };
    expect((JSON.parse(sent.messages.find((m) => m.role === "user")!.content) as { slots: unknown[] }).slots).toHaveLength(2);
    // The fake reverses what it was shown: Wednesday first, Tuesday second, then the rest as the statistics had them.
    expect(scores.map((s) => s.start).slice(0, 2)).toEqual([candidates[1]!.start, candidates[0]!.start]);
    expect(scores[0]!.reason).toMatch(/^The model prefers this/);
    for (const s of scores.slice(2)) expect(s.reason).toMatch(/^Outside Bo's working hours/);
    expect(scores[1]!.score).toBeGreaterThan(scores[2]!.score);
  });

  it("falls back to the statistical ranking past the deadline, without waiting for the slow answer", async () => {
    const { scores, elapsed } = await rankWith("slow");
    expectStatistical(scores);
    expect(elapsed).toBeLessThan(MODEL_DEADLINE_MS + 700);
    expect(MODEL_DEADLINE_MS + 700).toBeLessThan(SLOW_ANSWER_MS);
  });

  it("falls back on malformed JSON", async () => {
    expectStatistical((await rankWith("malformed")).scores);
    await rankWith("good");
  });

  it("falls back on an answer naming slots it was not shown", async () => {
    expectStatistical((await rankWith("unknown-slots")).scores);
    // The request's span says which ranking answered and why the model's did not.
    const span = await lastRankSpan();
    expect(span["sched.ai.ranked_by"]).toBe("statistics");
    expect(String(span["sched.ai.fallback_reason"])).toMatch(/\S/);
  });

  it("falls back on 429 and on 500, and after three failures in a row stops asking for a while", async () => {
    await rankWith("good");
    const limited = await rankWith("429");
    expect(limited.reachedServer).toBe(true);
    expectStatistical(limited.scores);
    expectStatistical((await rankWith("500")).scores);
    expectStatistical((await rankWith("500")).scores);
    const open = await rankWith("good");
    expect(open.reachedServer).toBe(false);
    expectStatistical(open.scores);
    expect(await lastRankSpan()).toMatchObject({ "sched.ai.ranked_by": "statistics", "sched.ai.fallback_reason": "circuit open" });
  });

  it("never sends an e-mail address, a name or a meeting title to the model", () => {
    expect(fake.bodies.length).toBeGreaterThan(5);
    for (const body of fake.bodies) {
      expect(body).not.toContain(ana.email);
      expect(body).not.toContain(bo.email);
      expect(body).not.toContain("@");
      expect(body).not.toContain(TITLE);
      expect(body).not.toMatch(/\bAna\b|\bBo\b/);
    }
  });
});

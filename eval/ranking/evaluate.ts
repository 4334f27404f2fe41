/**
 * npm run eval -- ranking: NDCG@5 of the heuristic, the statistical model and
 * (when OPENAI_API_KEY and AI_MODEL are set) the language model against the
 * hidden preferences of synthetic people, and the statistical model's speed.
 */
import { parseConfig } from "@sched/config";
import { createLogger } from "@sched/logging";
import { z } from "zod";
import { aiRankingService } from "../../services/ai-ranking/src/index.js";
import { NO_PREFERENCES, WEEKDAYS, type Preferences } from "@sched/proto";
import type { RankedPerson } from "../../services/ai-ranking/src/domain/fit.js";
import { learnPatterns } from "../../services/ai-ranking/src/domain/patterns.js";
import { rankCandidates } from "../../services/ai-ranking/src/domain/rank.js";
import { ModelRanker } from "../../services/ai-ranking/src/llm/modelRanker.js";
import { recommendSlots } from "../../services/availability/src/domain/recommend.js";
import { groupRelevance, ndcgAt } from "./relevance.js";
import { DAY, HOUR, MIN, makePerson, meetingsFor, random, type SyntheticPerson } from "./world.js";

/** A Monday away from daylight-saving changes in the zones used. */
const RANKED_MONDAY = Date.parse("2026-06-08T00:00:00Z");
const NOW = RANKED_MONDAY - 3 * DAY;
const HISTORY_WEEKS = 16;
const GROUPS = 200;
const K = 5;
const WORKING_HOURS = WEEKDAYS.slice(0, 5).map((day) => ({ day, start: "09:00", end: "17:00" }));

interface Scenario {
  people: SyntheticPerson[];
  candidates: Array<{ start: number; end: number }>;
}

function scenario(seed: number): Scenario {
  const rnd = random(seed);
  const size = 1 + Math.floor(rnd() * 4);
  const people = Array.from({ length: size }, (_, i) => makePerson(rnd, i));
  for (const p of people) {
    p.history = meetingsFor(rnd, p, RANKED_MONDAY - HISTORY_WEEKS * 7 * DAY, HISTORY_WEEKS);
    p.upcoming = meetingsFor(rnd, p, RANKED_MONDAY, 1).map((m) => ({ start: m.start, end: m.start + m.durationMinutes * MIN }));
  }
  const { slots } = recommendSlots({
    now: NOW,
    zone: people[0]!.zone,
    horizon: { start: RANKED_MONDAY, end: RANKED_MONDAY + 5 * DAY },
    timeRange: "any",
    durationMs: HOUR,
    people: people.map((p, i) => ({ userId: p.userId, zone: p.zone, workingHours: WORKING_HOURS, busy: p.upcoming, isCaller: i === 0 })),
    // As availability asks ai-ranking: its best 100, spread over the days.
    limit: 100,
  });
  return { people, candidates: slots.map((s) => ({ start: s.start, end: s.end })) };
}

/**
 * The people as ai-ranking sees them. `stated`: each also states the hidden
 * preferences on /v1/me. `historyWeeks`: only that much history is known (a
 * cold start).
 */
function rankedPeople(people: readonly SyntheticPerson[], options: { stated?: boolean; historyWeeks?: number } = {}): RankedPerson[] {
  const since = RANKED_MONDAY - (options.historyWeeks ?? HISTORY_WEEKS) * 7 * DAY;
  return people.map((p, i) => ({
    userId: p.userId,
    name: `Person ${i + 1}`,
    isCaller: i === 0,
    zone: p.zone,
    // ai-ranking learns from every confirmed meeting it has seen, the coming ones included.
    patterns: learnPatterns(
      [...p.history.filter((m) => m.start >= since), ...p.upcoming.map((m) => ({ start: m.start, durationMinutes: (m.end - m.start) / MIN, scheduledAt: NOW }))],
      p.zone,
    ),
    preferences: options.stated ? statedPreferences(p) : NO_PREFERENCES,
    meetings: p.upcoming,
  }));
}

function statedPreferences({ hidden }: SyntheticPerson): Preferences {
  const hhmm = (hour: number) => `${String(hour).padStart(2, "0")}:00`;
  return {
    preferredTimes: [{ start: hhmm(hidden.favouriteHours.from), end: hhmm(hidden.favouriteHours.to), days: hidden.favouriteDays.map((d) => WEEKDAYS[d]!) }],
    avoidDays: [],
    bufferMinutes: hidden.bufferMinutes,
    maxMeetingsPerDay: hidden.dailyCap,
  };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Groups the language model ranks (each one model call). */
const evalConfig = z.object({
  EVAL_MODEL_GROUPS: z.coerce.number().int().positive().default(50),
  /** Offline there is no user waiting: the model gets a generous deadline. */
  EVAL_MODEL_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
});

export async function evaluateRanking(): Promise<void> {
  const service = parseConfig(aiRankingService.config);
  const { EVAL_MODEL_GROUPS, EVAL_MODEL_TIMEOUT_MS } = parseConfig(evalConfig);
  const model =
    service.OPENAI_API_KEY && service.AI_MODEL
      ? new ModelRanker(
          { apiKey: service.OPENAI_API_KEY, baseURL: service.OPENAI_BASE_URL, model: service.AI_MODEL, timeoutMs: EVAL_MODEL_TIMEOUT_MS, topSlots: service.AI_MODEL_TOP_SLOTS },
          createLogger({ name: "eval", level: "warn" }),
        )
      : null;
  const heuristic: number[] = [];
  const statistical: number[] = [];
  const stated: number[] = [];
  const cold: number[] = [];
  const language: number[] = [];
  let modelAnswered = 0;
  let used = 0;
  for (let seed = 1; used < GROUPS; seed++) {
    const { people, candidates } = scenario(seed);
    if (candidates.length <= K) continue;
    used++;
    const relevance = new Map(candidates.map((c) => [c.start, groupRelevance(people, c)]));
    const all = [...relevance.values()];
    heuristic.push(ndcgAt(K, candidates.map((c) => relevance.get(c.start)!), all));
    const ranked = rankCandidates({ now: NOW, people: rankedPeople(people), candidates });
    statistical.push(ndcgAt(K, ranked.map((s) => relevance.get(s.start)!), all));
    const withStated = rankCandidates({ now: NOW, people: rankedPeople(people, { stated: true }), candidates });
    stated.push(ndcgAt(K, withStated.map((s) => relevance.get(s.start)!), all));
    const coldStart = rankCandidates({ now: NOW, people: rankedPeople(people, { historyWeeks: 2 }), candidates });
    cold.push(ndcgAt(K, coldStart.map((s) => relevance.get(s.start)!), all));
    if (model && used <= EVAL_MODEL_GROUPS) {
      const refined = await model.refine(ranked, rankedPeople(people));
      if (refined.by === "model") modelAnswered++;
      language.push(ndcgAt(K, refined.ranked.map((s) => relevance.get(s.start)!), all));
    }
  }

  const speed = timing();
  const h = mean(heuristic);
  const s = mean(statistical);
  console.log(`# Ranking evaluation (${GROUPS} groups of 1–4 people, ${HISTORY_WEEKS} weeks of history each, NDCG@${K})\n`);
  console.log("| model | NDCG@5 |\n|---|---|");
  console.log(`| heuristic (availability, no AI) | ${h.toFixed(3)} |`);
  console.log(`| statistical (ai-ranking) | ${s.toFixed(3)} |`);
  console.log(`| statistical, everyone also states their preferences on /v1/me | ${mean(stated).toFixed(3)} |`);
  console.log(`| statistical, only 2 weeks of history known | ${mean(cold).toFixed(3)} |`);
  if (model) console.log(`| language model ${service.AI_MODEL} on top (${language.length} groups, answered ${modelAnswered}) | ${mean(language).toFixed(3)} |`);
  else console.log("| language model | not configured (set OPENAI_API_KEY and AI_MODEL) |");
  console.log(`\nstatistical − heuristic: ${(s - h).toFixed(3)}`);
  console.log(`ranking 200 candidates for 10 people: median ${speed.median.toFixed(2)} ms, p95 ${speed.p95.toFixed(2)} ms over ${speed.runs} runs`);
  const ok = s >= 0.85 && s - h >= 0.15 && speed.median < 20;
  console.log(ok ? "\ntargets met: NDCG@5 ≥ 0.85, ≥ heuristic + 0.15, median < 20 ms" : "\nTARGETS MISSED");
  if (!ok) process.exitCode = 1;
}

/** rankCandidates alone for 200 half-hour candidates over two weeks and 10 people with history. */
function timing(): { median: number; p95: number; runs: number } {
  const rnd = random(4242);
  const people = Array.from({ length: 10 }, (_, i) => makePerson(rnd, i));
  for (const p of people) {
    p.history = meetingsFor(rnd, p, RANKED_MONDAY - HISTORY_WEEKS * 7 * DAY, HISTORY_WEEKS);
    p.upcoming = meetingsFor(rnd, p, RANKED_MONDAY, 2).map((m) => ({ start: m.start, end: m.start + m.durationMinutes * MIN }));
  }
  const ranked = rankedPeople(people);
  const candidates = Array.from({ length: 200 }, (_, i) => {
    const start = RANKED_MONDAY + Math.floor(i / 20) * DAY + 8 * HOUR + (i % 20) * 30 * MIN;
    return { start, end: start + 30 * MIN };
  });
  const times: number[] = [];
  for (let run = 0; run < 60; run++) {
    const t = performance.now();
    rankCandidates({ now: NOW, people: ranked, candidates });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median: median(times), p95: times[Math.floor(times.length * 0.95)]!, runs: times.length };
}

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
import type { Claim, PartOfDay } from "../../services/ai-ranking/src/domain/reasons.js";
import { ModelRanker } from "../../services/ai-ranking/src/outbound/llm/modelRanker.js";
import { recommendSlots } from "../../services/availability/src/domain/recommend.js";
import { groupRelevance, ndcgAt } from "./relevance.js";
import { DAY, HOUR, MIN, localMidnight, makePerson, meetingsFor, random, type SyntheticPerson } from "./world.js";

/** A Monday away from daylight-saving changes in the zones used. */
const RANKED_MONDAY = Date.parse("2026-06-08T00:00:00Z");
const NOW = RANKED_MONDAY - 3 * DAY;
const HISTORY_WEEKS = 16;
const GROUPS = 200;
const K = 5;
const WORKING_HOURS = WEEKDAYS.slice(0, 5).map((day) => ({ day, start: "09:00", end: "17:00" }));

interface Candidate {
  start: number;
  end: number;
  heuristicScore: number;
  withinWorkingHours: string[];
}

interface Scenario {
  people: SyntheticPerson[];
  /** What availability sends ai-ranking, in its order: its best 100, spread over the days. */
  candidates: Candidate[];
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
    limit: 100,
  });
  return { people, candidates: slots.map((s) => ({ start: s.start, end: s.end, heuristicScore: s.score, withinWorkingHours: s.withinWorkingHours })) };
}

/** What ai-ranking knows of the people: their history (how many weeks of it) and whether they state their preferences. */
interface Knowledge {
  historyWeeks: number;
  stated: boolean;
}

/** The people as ai-ranking sees them with that knowledge. */
function rankedPeople(people: readonly SyntheticPerson[], knowledge: Knowledge): RankedPerson[] {
  const since = RANKED_MONDAY - knowledge.historyWeeks * 7 * DAY;
  return people.map((p, i) => ({
    userId: p.userId,
    name: `Person ${i + 1}`,
    isCaller: i === 0,
    zone: p.zone,
    // ai-ranking learns from every confirmed meeting it has seen, the coming ones included (none at all for an unknown person).
    patterns: learnPatterns(
      knowledge.historyWeeks === 0
        ? []
        : [...p.history.filter((m) => m.start >= since), ...p.upcoming.map((m) => ({ start: m.start, durationMinutes: (m.end - m.start) / MIN, scheduledAt: NOW }))],
      p.zone,
    ),
    preferences: knowledge.stated ? statedPreferences(p) : NO_PREFERENCES,
    meetings: p.upcoming,
  }));
}

function statedPreferences({ hidden }: SyntheticPerson): Preferences {
  const hhmm = (hour: number) => `${String(hour).padStart(2, "0")}:00`;
  return {
    preferredTimes: [{ start: hhmm(hidden.favouriteHours.from), end: hhmm(hidden.favouriteHours.to), days: hidden.favouriteDays.map((d) => WEEKDAYS[d]!) }],
    avoidDays: hidden.avoidedDay === null ? [] : [WEEKDAYS[hidden.avoidedDay]!],
    bufferMinutes: hidden.bufferMinutes,
    maxMeetingsPerDay: hidden.dailyCap,
  };
}

/** The knowledge each row of the results gives the statistical model. */
const CONDITIONS: Array<{ label: string; knowledge: Knowledge }> = [
  { label: "cold start: no history, nothing stated", knowledge: { historyWeeks: 0, stated: false } },
  { label: "stated preferences only, no history", knowledge: { historyWeeks: 0, stated: true } },
  { label: `history (${HISTORY_WEEKS} weeks)`, knowledge: { historyWeeks: HISTORY_WEEKS, stated: false } },
  { label: "history and stated preferences", knowledge: { historyWeeks: HISTORY_WEEKS, stated: true } },
  { label: "only the last 2 weeks of history", knowledge: { historyWeeks: 2, stated: false } },
];

/** The groups each column of the results covers. */
const CASES: Array<{ label: string; covers: (people: readonly SyntheticPerson[]) => boolean }> = [
  { label: "all groups", covers: () => true },
  { label: "with a clusterer", covers: (people) => people.some((p) => p.hidden.clusters) },
  { label: "mixed zones", covers: (people) => new Set(people.map((p) => utcOffsetAt(p.zone, RANKED_MONDAY))).size > 1 },
  { label: "with an avoided day", covers: (people) => people.some((p) => p.hidden.avoidedDay !== null) },
];

function utcOffsetAt(zone: string, at: number): number {
  return localMidnight(at, zone) - at;
}

/** Whether a reason's claim about a person holds for their hidden preferences; null for claims about the calendar rather than the person. */
function claimHolds(claim: Claim, person: SyntheticPerson): boolean | null {
  const { hidden } = person;
  const hoursOverlap = (part: PartOfDay) => {
    const [from, to] = part === "morning" ? [0, 12] : part === "afternoon" ? [12, 17] : [17, 24];
    return hidden.favouriteHours.from < to && from < hidden.favouriteHours.to;
  };
  switch (claim.kind) {
    case "usualTime":
      return hidden.favouriteDays.includes(claim.weekday) && hoursOverlap(claim.partOfDay);
    case "unusualTime":
      return !hidden.favouriteDays.includes(claim.weekday) || claim.hour < hidden.favouriteHours.from || claim.hour >= hidden.favouriteHours.to;
    case "avoidsDay":
      return hidden.avoidedDay === claim.weekday;
    case "backToBack":
    case "awayFromOthers":
      return hidden.clusters;
    case "statedTime":
    case "outsideStatedTime":
      // The stated windows are the hidden favourite hours on the favourite days.
      return true;
    default:
      return null;
  }
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Groups the language model ranks (each one model call). */
const evalConfig = z.object({
  EVAL_MODEL_GROUPS: z.coerce.number().int().positive().default(50),
  /** Offline there is no user waiting: the model gets a generous deadline. */
  EVAL_MODEL_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
});

/** Targets (docs/ranking-eval.md). */
const TARGET = { ndcg: 0.9, truthfulReasons: 0.9, medianMs: 5 } as const;

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
  // ndcg[row][case]: the heuristic first, then each condition.
  const rows = ["heuristic (availability, no AI)", ...CONDITIONS.map((c) => `statistical: ${c.label}`)];
  const ndcg = rows.map(() => CASES.map(() => [] as number[]));
  const outsideHours = rows.map(() => 0);
  const claims = CONDITIONS.map(() => ({ held: 0, made: 0 }));
  const language: number[] = [];
  let modelAnswered = 0;
  let used = 0;
  let withInsideChoice = 0;
  for (let seed = 1; used < GROUPS; seed++) {
    const { people, candidates } = scenario(seed);
    if (candidates.length <= K) continue;
    used++;
    const relevance = new Map(candidates.map((c) => [c.start, groupRelevance(people, c)]));
    const all = [...relevance.values()];
    const cases = CASES.map((c) => c.covers(people));
    const insideEveryone = new Set(candidates.filter((c) => c.withinWorkingHours.length === people.length).map((c) => c.start));
    const byPerson = new Map(people.map((p) => [p.userId, p]));
    const record = (row: number, order: readonly number[]) => {
      const score = ndcgAt(K, order.map((start) => relevance.get(start)!), all);
      cases.forEach((covered, i) => covered && ndcg[row]![i]!.push(score));
      // A top-five slot outside someone's hours while a slot inside everyone's was left below it.
      const top = order.slice(0, K);
      const insideLeftOut = [...insideEveryone].some((start) => !top.includes(start));
      if (insideLeftOut) outsideHours[row]! += top.filter((start) => !insideEveryone.has(start)).length;
    };
    if (insideEveryone.size > 0 && insideEveryone.size < candidates.length) withInsideChoice++;
    record(0, candidates.map((c) => c.start));
    CONDITIONS.forEach((condition, i) => {
      const ranked = rankCandidates({ now: NOW, people: rankedPeople(people, condition.knowledge), candidates });
      record(i + 1, ranked.map((s) => s.start));
      for (const slot of ranked.slice(0, K)) {
        for (const claim of slot.claims) {
          const holds = claimHolds(claim, byPerson.get(claim.userId)!);
          if (holds === null) continue;
          claims[i]!.made++;
          if (holds) claims[i]!.held++;
        }
      }
    });
    if (model && used <= EVAL_MODEL_GROUPS) {
      const known = rankedPeople(people, CONDITIONS[2]!.knowledge);
      const refined = await model.refine(rankCandidates({ now: NOW, people: known, candidates }), known);
      if (refined.by === "model") modelAnswered++;
      language.push(ndcgAt(K, refined.ranked.map((s) => relevance.get(s.start)!), all));
    }
  }

  const speed = timing();
  const at = (row: number, c = 0) => mean(ndcg[row]![c]!);
  console.log(`# Ranking evaluation (${GROUPS} groups of 1–4 people, ${HISTORY_WEEKS} weeks of history each, NDCG@${K})\n`);
  console.log(`| model | ${CASES.map((c) => `${c.label} (${ndcg[0]![CASES.indexOf(c)]!.length})`).join(" | ")} | top-5 slots outside someone's hours | reasons true of the person |`);
  console.log(`|---|${CASES.map(() => "---|").join("")}---|---|`);
  rows.forEach((label, row) => {
    const truthful = row === 0 ? "–" : claims[row - 1]!.made === 0 ? "no claims" : `${((100 * claims[row - 1]!.held) / claims[row - 1]!.made).toFixed(1)} % of ${claims[row - 1]!.made}`;
    console.log(`| ${label} | ${CASES.map((_, c) => at(row, c).toFixed(3)).join(" | ")} | ${outsideHours[row]} | ${truthful} |`);
  });
  if (model) console.log(`| language model ${service.AI_MODEL} on the history row (${language.length} groups, answered ${modelAnswered}) | ${mean(language).toFixed(3)} | | | | | |`);
  else console.log("| language model | not configured (set OPENAI_API_KEY and AI_MODEL) | | | | | |");
  console.log(`\ngroups where some candidates lie inside everyone's working hours and some do not: ${withInsideChoice}`);
  console.log(`ranking 200 candidates for 10 people: median ${speed.median.toFixed(2)} ms, p95 ${speed.p95.toFixed(2)} ms of CPU time over ${speed.runs} runs (median wall time ${speed.wallMedian.toFixed(2)} ms)`);

  const cold = CONDITIONS.findIndex((c) => c.knowledge.historyWeeks === 0 && !c.knowledge.stated) + 1;
  const strong = CONDITIONS.flatMap((c, i) => (c.knowledge.historyWeeks === HISTORY_WEEKS || c.knowledge.stated ? [i + 1] : []));
  const truthful = claims.filter((c) => c.made > 0).every((c) => c.held / c.made >= TARGET.truthfulReasons);
  const missed = [
    ...strong.filter((row) => at(row) < TARGET.ndcg).map((row) => `${rows[row]}: NDCG@5 ${at(row).toFixed(3)} < ${TARGET.ndcg}`),
    ...CASES.flatMap((_, c) => (at(cold, c) < at(0, c) - 1e-9 ? [`cold start below the heuristic for ${CASES[c]!.label}`] : [])),
    ...rows.flatMap((label, row) => (row > 0 && outsideHours[row]! > 0 ? [`${label}: ${outsideHours[row]} top-5 slots outside someone's working hours`] : [])),
    ...(truthful ? [] : [`fewer than ${100 * TARGET.truthfulReasons} % of reasons' claims hold`]),
    ...(speed.median < TARGET.medianMs ? [] : [`median ranking time ${speed.median.toFixed(2)} ms ≥ ${TARGET.medianMs} ms`]),
  ];
  if (missed.length === 0) {
    console.log(`\ntargets met: NDCG@5 ≥ ${TARGET.ndcg} with history, stated preferences or both; cold start ≥ heuristic in every case; no top-5 slot outside someone's hours when inside ones exist; ≥ ${100 * TARGET.truthfulReasons} % of claims true; median < ${TARGET.medianMs} ms`);
  } else {
    console.log(`\nTARGETS MISSED:\n- ${missed.join("\n- ")}`);
    process.exitCode = 1;
  }
}

/** rankCandidates alone for 200 half-hour candidates over two weeks and 10 people with history. */
function timing(): { median: number; p95: number; wallMedian: number; runs: number } {
  const rnd = random(4242);
  const people = Array.from({ length: 10 }, (_, i) => makePerson(rnd, i));
  for (const p of people) {
    p.history = meetingsFor(rnd, p, RANKED_MONDAY - HISTORY_WEEKS * 7 * DAY, HISTORY_WEEKS);
    p.upcoming = meetingsFor(rnd, p, RANKED_MONDAY, 2).map((m) => ({ start: m.start, end: m.start + m.durationMinutes * MIN }));
  }
  const ranked = rankedPeople(people, { historyWeeks: HISTORY_WEEKS, stated: false });
  // As availability sends them: its score, and whose working hours hold each (all but one person's for every third).
  const candidates = Array.from({ length: 200 }, (_, i) => {
    const start = RANKED_MONDAY + Math.floor(i / 20) * DAY + 8 * HOUR + (i % 20) * 30 * MIN;
    return { start, end: start + 30 * MIN, heuristicScore: 1 - i / 400, withinWorkingHours: people.slice(i % 3 === 0 ? 1 : 0).map((p) => p.userId) };
  });
  // A running service ranks with warm code: the first runs, while the JIT compiles, are not counted.
  for (let run = 0; run < 20; run++) rankCandidates({ now: NOW, people: ranked, candidates });
  // CPU time is the computation's cost; wall time also counts whatever else the machine runs meanwhile.
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let run = 0; run < 60; run++) {
    const t = performance.now();
    const c = process.cpuUsage();
    rankCandidates({ now: NOW, people: ranked, candidates });
    const used = process.cpuUsage(c);
    wall.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  wall.sort((a, b) => a - b);
  return { median: median(cpu), p95: cpu[Math.floor(cpu.length * 0.95)]!, wallMedian: median(wall), runs: cpu.length };
}

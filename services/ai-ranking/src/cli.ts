// The ai-ranking command line: `rebuild` forgets everything learned and has the running replicas learn it again from the streams.
import { loadConfigOrExit } from "@sched/config";
import { openSchema } from "@sched/db";
import { commonConfigSchema } from "@sched/runtime";
import { startNewGeneration } from "./db/queries.js";
import { migrations } from "./db/migrations/index.js";
import { aiRankingService } from "./service.js";

const USAGE = `usage: ai-ranking rebuild

rebuild   Deletes the learned patterns, the meeting history and the copy of the
          accounts, and starts a new generation of the history consumers: every
          running ai-ranking replica notices within AI_HISTORY_CHECK_MS and reads
          the MEETINGS and ACCOUNTS streams again from their first event.
          Reads DATABASE_URL.
`;

const cliConfig = commonConfigSchema.pick({ DATABASE_URL: true });

async function main(argv: readonly string[]): Promise<number> {
  if (argv.length !== 1 || argv[0] !== "rebuild") {
    process.stderr.write(USAGE);
    return argv[0] === "help" || argv[0] === "--help" ? 0 : 2;
  }
  const config = loadConfigOrExit(cliConfig);
  // One statement at a time: a single connection is all the rebuild needs.
  let db;
  try {
    db = await openSchema({ kind: "postgres", url: config.DATABASE_URL, poolMax: 1 }, aiRankingService.schema, migrations);
  } catch (err) {
    process.stderr.write(`Cannot open the ai_ranking schema at DATABASE_URL: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const generation = await startNewGeneration(db);
    process.stdout.write(`History cleared; generation ${generation} starts. Running replicas replay the streams from their first event.\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}

process.exitCode = await main(process.argv.slice(2));

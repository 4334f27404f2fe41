// The ai-ranking command line: `rebuild` forgets everything learned and has the running replicas learn it again from the streams.
import { ConfigError, parseConfig } from "@sched/config";
import { openSchema } from "@sched/db";
import { commonConfigSchema } from "@sched/runtime";
import { z } from "zod";
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

const cliConfig = commonConfigSchema.pick({ DATABASE_URL: true }).extend({ DB_POOL_MAX: z.literal(1).default(1) });

async function main(argv: readonly string[]): Promise<number> {
  if (argv.length !== 1 || argv[0] !== "rebuild") {
    process.stderr.write(USAGE);
    return argv[0] === "help" || argv[0] === "--help" ? 0 : 2;
  }
  let config;
  try {
    config = parseConfig(cliConfig);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 78;
  }
  const db = await openSchema({ kind: "postgres", url: config.DATABASE_URL, poolMax: config.DB_POOL_MAX }, aiRankingService.schema, migrations);
  try {
    const generation = await startNewGeneration(db);
    process.stdout.write(`History cleared; generation ${generation} starts. Running replicas replay the streams from their first event.\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}

process.exitCode = await main(process.argv.slice(2));

import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Workspace packages resolve to their TypeScript sources through the
// "@sched/source" export condition, so tests never need a build first.
export default defineConfig({
  resolve: { conditions: ["@sched/source"] },
  ssr: { resolve: { conditions: ["@sched/source"], externalConditions: ["@sched/source"] } },
  test: {
    // Two files at once even on a 2-core machine, where vitest would run one (cores − 1): an integration file
    // spends most of its time waiting on servers, timers and the processes it started, so a second one uses
    // the CPU the first leaves idle (docs/testing.md, "Two files at once").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["**/test/**/*.unit.test.ts"],
          exclude: ["**/node_modules/**"],
          // Unit tests wait on nothing but the CPU: a property of a few hundred runs takes 1–2 s on an idle
          // 2-core machine and several times that beside other work, which vitest's 5 s default fails.
          testTimeout: 60_000,
          // The unit files share one worker's loaded modules rather than each loading every source
          // again: they keep no global state between files (the one with fake timers restores real
          // ones after each test). 40 s rather than 111 s for the 930 unit tests (docs/testing.md).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["**/test/**/*.int.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 30_000,
          // A hook starts a whole test system (every service's migrations, a gateway, consumers):
          // about 10 s on an idle 2-core machine, and measured at 47–52 s beside a CPU hog.
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

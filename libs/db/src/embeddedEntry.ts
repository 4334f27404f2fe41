// `@sched/db/embedded`: the embedded Postgres (PGlite), an optional peer of this package, so only
// what runs one (npm start, tests) installs it and a service image holds none of it.
export { EmbeddedDatabase, joinsCallersTransaction } from "./embedded.js";
export { inBackground } from "./embeddedSession.js";
export { initialisedFolderCache } from "./embeddedTemplate.js";

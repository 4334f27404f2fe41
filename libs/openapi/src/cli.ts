import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { buildOpenApiDocument } from "./document.js";

/** `npm run openapi`: writes the document to the given path (docs/openapi.json). */
const target = resolve(process.argv[2] ?? "docs/openapi.json");
await writeFile(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);

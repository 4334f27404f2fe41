import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const STALE = "is out of date with the route table: run `npm run openapi`";

describe("the published description", () => {
  let dir: string;
  let generated: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "openapi-"));
    generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
    await writeFile(join(dir, "openapi.json"), generated);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("docs/openapi.json is the document the code generates", async () => {
    const published = await readFile(join(ROOT, "docs/openapi.json"), "utf8");
    expect(published === generated, `docs/openapi.json ${STALE}`).toBe(true);
  });

  it("the typed client's types are what openapi-typescript makes of the document", async () => {
    const out = join(dir, "schema.ts");
    await promisify(execFile)(join(ROOT, "node_modules/.bin/openapi-typescript"), [join(dir, "openapi.json"), "-o", out], { cwd: ROOT });
    const [expected, committed] = await Promise.all([readFile(out, "utf8"), readFile(join(ROOT, "libs/client/src/schema.ts"), "utf8")]);
    expect(committed === expected, `libs/client/src/schema.ts ${STALE}`).toBe(true);
  });
});

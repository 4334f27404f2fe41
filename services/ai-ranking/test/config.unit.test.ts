import { describe, expect, it } from "vitest";
import { aiRankingService } from "../src/index.js";

describe("ai-ranking's settings", () => {
  const parse = (env: Record<string, string>) => aiRankingService.config.safeParse(env);

  it("runs without a language model by default, and reads an empty variable as unset", () => {
    expect(parse({}).data).toMatchObject({ AI_MODEL_TIMEOUT_MS: 600, AI_MODEL_TOP_SLOTS: 10, AI_HISTORY_CHECK_MS: 5000 });
    expect(parse({ OPENAI_API_KEY: "", AI_MODEL: "", OPENAI_BASE_URL: "" }).data).toMatchObject({ OPENAI_API_KEY: undefined, AI_MODEL: undefined });
  });

  it("wants a key and a model together, and a base URL that is a URL", () => {
    expect(parse({ OPENAI_API_KEY: "sk-x", AI_MODEL: "m", OPENAI_BASE_URL: "http://127.0.0.1:8000/v1" }).success).toBe(true);
    const alone = parse({ OPENAI_API_KEY: "sk-x" });
    expect(alone.success).toBe(false);
    expect(alone.error!.issues[0]!.path).toEqual(["AI_MODEL"]);
    expect(parse({ OPENAI_API_KEY: "sk-x", AI_MODEL: "m", OPENAI_BASE_URL: "localhost" }).success).toBe(false);
    expect(parse({ AI_MODEL_TOP_SLOTS: "1" }).success).toBe(false);
  });
});

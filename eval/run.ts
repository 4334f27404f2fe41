/** npm run eval -- <ranking>: offline evaluations that print their figures. */
import { evaluateRanking } from "./ranking/evaluate.js";

const EVALUATIONS: Record<string, () => Promise<void>> = { ranking: evaluateRanking };

const name = process.argv[2];
const evaluation = name ? EVALUATIONS[name] : undefined;
if (!evaluation) {
  console.error(`${name ? `unknown evaluation: ${name}` : "which evaluation?"}\nusage: npm run eval -- <${Object.keys(EVALUATIONS).join("|")}>`);
  process.exit(2);
}
await evaluation();

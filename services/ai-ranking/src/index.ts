export { aiRankingService, serveAiRanking } from "./service.js";

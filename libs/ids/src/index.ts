export * from "./ids.js";
export * from "./apiKeys.js";
export { canonicalJson, requestFingerprint } from "./fingerprint.js";
export { Sealer } from "./sealing.js";

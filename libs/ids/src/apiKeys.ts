import { hash } from "node:crypto";
import type { Mode } from "@sched/proto";
import { randomBase62 } from "./ids.js";

const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32,128}$/;

/** A new secret API key; it is shown once and only its hash is kept. */
export function generateApiKey(mode: Mode): string {
  return `sk_${mode}_${randomBase62(40)}`;
}

/** The mode a well-formed key belongs to, or undefined for a malformed one. */
export function apiKeyMode(key: string): Mode | undefined {
  const m = KEY_PATTERN.exec(key);
  return m ? (m[1] as Mode) : undefined;
}

/**
 * SHA-256 of the key. Keys carry 238 bits of randomness, so a fast hash is
 * safe and lets every request be checked with one indexed lookup. One call,
 * no Hash object: every gateway request hashes its key.
 */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

/** The part of a key that may be shown again (`sk_test_AbC…`), to tell keys apart. */
export function apiKeyHint(key: string): string {
  return `${key.slice(0, key.indexOf("_", 3) + 5)}…`;
}

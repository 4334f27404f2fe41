import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Bytes of every file under a folder, as a data folder's size is told. */
export function folderBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

import { parseHorizon } from "../domain/dates.js";
import type { Interval } from "../domain/intervals.js";
import { invalidParam } from "./deps.js";

/** The horizon `from`–`to` of a request, read on `zone`'s clock (parseHorizon); a bad one is the 400 naming the field. */
export function readHorizon(body: { from?: string | undefined; to?: string | undefined }, zone: string, now: number): Interval {
  const parsed = parseHorizon({ from: body.from, to: body.to }, zone, now);
  if (!parsed.ok) throw invalidParam(parsed);
  return parsed.value;
}

/** The minute last formatted, and its text up to the seconds (`2026-11-26T11:25:`). */
let minuteStart = Number.NaN;
let minuteText = "";

/**
 * `new Date(ms).toISOString()`, made from the text of its minute worked out
 * once a minute: the request log stamps every request, and Date's own
 * formatting costs a few µs each on a busy gateway.
 */
export function isoTimestamp(ms: number): string {
  const start = ms - (((ms % 60_000) + 60_000) % 60_000);
  if (start !== minuteStart) {
    const iso = new Date(start).toISOString();
    minuteText = iso.slice(0, iso.length - "ss.mmmZ".length);
    minuteStart = start;
  }
  const within = ms - start;
  const seconds = Math.floor(within / 1_000);
  const millis = within % 1_000;
  return `${minuteText}${seconds < 10 ? "0" : ""}${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}

/**
 * Header values that NATS cannot carry as they are travel as JSON strings.
 * A NATS header value must not hold CR or LF (the client throws), loses
 * surrounding white space, and is sent as UTF-8, which has no unpaired
 * surrogate; text a client chose (an Idempotency-Key, a tracestate, an error
 * message quoting a query) may hold any of these. A value that can travel
 * as it is goes unchanged, so a peer of an earlier release reads it as
 * before; the names of those sent as JSON are listed in ENCODED_HEADERS,
 * which such a peer ignores (it then sees the JSON text, never a broken
 * message).
 */
export const ENCODED_HEADERS = "Sched-Json-Headers";

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A C0 control character (CR and LF among them) or DEL. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Whether a value reaches the other side of NATS exactly as it was sent. */
function travelsAsIs(value: string): boolean {
  return !hasControl(value) && !UNPAIRED_SURROGATE.test(value) && value === value.trim();
}

/** The value as sent: itself when it travels as it is, else its JSON string (control characters and surrogates escaped, in quotes). */
export function headerText(value: string): string {
  return travelsAsIs(value) ? value : JSON.stringify(value);
}

/**
 * Puts headers into `target` as they go on the wire: values that cannot travel
 * as they are in JSON, listed in ENCODED_HEADERS (last). One pass, no arrays:
 * every request the bus sends goes through here.
 */
export function encodeHeadersInto<T>(headers: Readonly<Record<string, string>>, target: T, put: (target: T, name: string, value: string) => void): void {
  let encoded: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const text = headerText(value);
    // Only a value sent as JSON differs from its text (it gains quotes).
    if (text !== value) encoded = encoded === undefined ? name : `${encoded},${name}`;
    put(target, name, text);
  }
  if (encoded !== undefined) put(target, ENCODED_HEADERS, encoded);
}

/** Headers as a plain record (first value of each), as they were sent: ENCODED_HEADERS read and left out. One pass, as every message served reads them. */
export function headerValues(h: Iterable<[string, string[]]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  let listed: string | undefined;
  for (const [name, values] of h) {
    if (name.toLowerCase() === ENCODED_HEADER_NAME) listed ??= values[0] ?? "";
    else out[name] = values[0] ?? "";
  }
  if (listed === undefined) return out;
  const encoded = new Set(listed.split(",").map((n) => n.trim().toLowerCase()));
  for (const name of Object.keys(out)) if (encoded.has(name.toLowerCase())) out[name] = fromJsonText(out[name]!);
  return out;
}

const ENCODED_HEADER_NAME = ENCODED_HEADERS.toLowerCase();

/** A value listed in ENCODED_HEADERS, as it was sent; one that is not a JSON string stays as it came. */
function fromJsonText(raw: string): string {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "string" ? value : raw;
  } catch {
    return raw;
  }
}

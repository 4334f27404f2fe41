/** The cookies of a Cookie header by name; the first of a repeated name wins, as browsers send the most specific first. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) {
      try {
        cookies.set(name, decodeURIComponent(part.slice(eq + 1).trim()));
      } catch {
        // A value that is not percent-encoding names nothing we made.
      }
    }
  }
  return cookies;
}

import type { RouteDef } from "@sched/proto";

export type RouteMatch =
  | { kind: "found"; route: RouteDef; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

interface CompiledRoute {
  route: RouteDef;
  /** The path's segments; `undefined` where the route takes a parameter. */
  literals: Array<string | undefined>;
  /** Each parameter's name and the segment it is read from. */
  params: Array<readonly [name: string, at: number]>;
}

/**
 * Matches a request against the route table. Paths only use literal and
 * `:name` segments; a path known under another method is 405 with Allow.
 * A segment that is not valid percent-encoding (`%zz`) is taken as written:
 * it matches no literal, and as an id it is one of the wrong shape, which
 * the route then answers like any other (404 once the key is checked and
 * counted), while another method on that path is still 405.
 *
 * Worked out once for every request to come: the routes are grouped by
 * their number of segments and their leading literals, so a request looks
 * only at the few that could match it, in the table's order, and builds the
 * parameters of the one it takes.
 */
export function compileRoutes(routes: readonly RouteDef[]): (method: string, path: string) => RouteMatch {
  const candidatesOf = groupByLeadingLiterals(routes.map(compile));
  return (method, rawPath) => {
    const segments = split(rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath).map(decodeSegment);
    let allow: Set<string> | undefined;
    for (const c of candidatesOf(segments)) {
      if (!matches(c, segments)) continue;
      if (c.route.method === method) return { kind: "found", route: c.route, params: paramsOf(c, segments) };
      (allow ??= new Set()).add(c.route.method);
    }
    if (!allow) return { kind: "not_found" };
    return { kind: "method_not_allowed", allow: [...allow].sort() };
  };
}

function compile(route: RouteDef): CompiledRoute {
  const segments = split(route.path);
  return {
    route,
    literals: segments.map((s) => (s.startsWith(":") ? undefined : s)),
    params: segments.flatMap((s, at) => (s.startsWith(":") ? [[s.slice(1), at] as const] : [])),
  };
}

/**
 * The routes a request could match, in the table's order, found by its first
 * two segments and its length (maps of maps: a key string built for every
 * request would cost more than the look-up saves). A route with a parameter
 * in either of its first two segments (or with fewer than two) could match
 * any request of its length: it is among the candidates of every group of that length, and of
 * its own for requests no literal route shares the first two segments of.
 */
function groupByLeadingLiterals(compiled: readonly CompiledRoute[]): (segments: readonly string[]) => readonly CompiledRoute[] {
  const leadingParameter = (c: CompiledRoute) => c.literals[0] === undefined || c.literals[1] === undefined;
  const sameLength = (length: number) => compiled.filter((c) => c.literals.length === length);
  const byLeading = new Map<string | undefined, Map<string | undefined, CompiledRoute[][]>>();
  for (const c of compiled.filter((c) => !leadingParameter(c))) {
    const [first, second] = c.literals;
    const bySecond = byLeading.get(first) ?? byLeading.set(first, new Map()).get(first)!;
    const byLength = bySecond.get(second) ?? bySecond.set(second, []).get(second)!;
    byLength[c.literals.length] = sameLength(c.literals.length).filter((other) => leadingParameter(other) || (other.literals[0] === first && other.literals[1] === second));
  }
  const withLeadingParameter: CompiledRoute[][] = [];
  for (const c of compiled.filter(leadingParameter)) withLeadingParameter[c.literals.length] = sameLength(c.literals.length).filter(leadingParameter);
  return (segments) => byLeading.get(segments[0])?.get(segments[1])?.[segments.length] ?? withLeadingParameter[segments.length] ?? [];
}

function split(path: string): string[] {
  return path.split("/").slice(1);
}

/** A path segment decoded, or as written when it is not valid percent-encoding. */
function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matches(c: CompiledRoute, segments: readonly string[]): boolean {
  if (c.literals.length !== segments.length) return false;
  for (let i = 0; i < segments.length; i++) {
    const literal = c.literals[i];
    if (literal === undefined ? segments[i] === "" : literal !== segments[i]) return false;
  }
  return true;
}

function paramsOf(c: CompiledRoute, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, at] of c.params) params[name] = segments[at]!;
  return params;
}

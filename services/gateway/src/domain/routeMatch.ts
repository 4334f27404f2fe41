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

/** How many leading segments pick a route's candidates: `/v1/meetings/…` shares them with no other resource. */
const KEY_SEGMENTS = 2;

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
  const compiled = routes.map(compile);
  const groups = groupByLeadingLiterals(compiled);
  return (method, rawPath) => {
    const segments = split(rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath).map(decodeSegment);
    const candidates = groups.get(groupKey(segments)) ?? groups.get(wildcardKey(segments.length)) ?? [];
    let allow: Set<string> | undefined;
    for (const c of candidates) {
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
 * The routes a request of each key could match, in the table's order. A route
 * with a parameter among its leading segments could match any request of its
 * length: it joins every group of that length, and one of its own for the
 * keys no literal route has.
 */
function groupByLeadingLiterals(compiled: readonly CompiledRoute[]): Map<string, CompiledRoute[]> {
  const keyOf = (c: CompiledRoute) => (c.literals.slice(0, KEY_SEGMENTS).includes(undefined) ? wildcardKey(c.literals.length) : groupKey(c.literals));
  const groups = new Map<string, CompiledRoute[]>();
  for (const key of new Set(compiled.map(keyOf))) {
    groups.set(
      key,
      compiled.filter((c) => keyOf(c) === key || (keyOf(c) === wildcardKey(c.literals.length) && key.startsWith(`${c.literals.length} `))),
    );
  }
  return groups;
}

/** A request's or a literal route's group: its length and leading segments. */
function groupKey(segments: ReadonlyArray<string | undefined>): string {
  return `${segments.length} ${segments.slice(0, KEY_SEGMENTS).join("/")}`;
}

/** The group of the routes of this length with a parameter among their leading segments. */
function wildcardKey(length: number): string {
  return `${length} :`;
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

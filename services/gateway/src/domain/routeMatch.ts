import type { RouteDef } from "@sched/proto";

export type RouteMatch =
  | { kind: "found"; route: RouteDef; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

interface CompiledRoute {
  route: RouteDef;
  segments: string[];
}

/**
 * Matches a request against the route table. Paths only use literal and
 * `:name` segments; a path known under another method is 405 with Allow.
 * A segment that is not valid percent-encoding (`%zz`) is taken as written:
 * it matches no literal, and as an id it is one of the wrong shape, which
 * the route then answers like any other (404 once the key is checked and
 * counted), while another method on that path is still 405.
 */
export function compileRoutes(routes: readonly RouteDef[]): (method: string, path: string) => RouteMatch {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: split(route.path) }));
  return (method, rawPath) => {
    const decoded = split(rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath).map(decodeSegment);
    const allow = new Set<string>();
    for (const c of compiled) {
      const params = matchSegments(c.segments, decoded);
      if (!params) continue;
      if (c.route.method === method) return { kind: "found", route: c.route, params };
      allow.add(c.route.method);
    }
    if (allow.size === 0) return { kind: "not_found" };
    return { kind: "method_not_allowed", allow: [...allow].sort() };
  };
}

function split(path: string): string[] {
  return path.split("/").slice(1);
}

/** A path segment decoded, or as written when it is not valid percent-encoding. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const a = actual[i]!;
    if (p.startsWith(":")) {
      if (a === "") return undefined;
      params[p.slice(1)] = a;
    } else if (p !== a) return undefined;
  }
  return params;
}

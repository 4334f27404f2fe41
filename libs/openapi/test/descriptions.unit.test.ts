import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.js";

// The document is plain JSON; the test walks it freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const document: Json = buildOpenApiDocument();

const resolve = (ref: string): Json =>
  ref
    .slice(2)
    .split("/")
    .reduce((node: Json, part: string) => node[part.replace(/~1/g, "/").replace(/~0/g, "~")], document);

/**
 * The paths of every property below `schema` that has no description, each
 * named from `at`. A `$ref` is followed once per component, and a property
 * that is only a `$ref` counts as described when its component is.
 */
function undescribed(schema: Json, at: string, seen: Set<string>): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return [];
    seen.add(schema.$ref);
    return undescribed(resolve(schema.$ref), schema.$ref, seen);
  }
  const missing: string[] = [];
  for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
    const target = property.$ref ? resolve(property.$ref) : property;
    if (!property.description && !target.description) missing.push(`${at}.${name}`);
    missing.push(...undescribed(property, `${at}.${name}`, seen));
  }
  if (schema.items) missing.push(...undescribed(schema.items, `${at}[]`, seen));
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    for (const [i, s] of (schema[key] ?? []).entries()) missing.push(...undescribed(s, `${at}.${key}[${i}]`, seen));
  }
  return missing;
}

/** Every parameter and body field of every operation, request and response, that has no description. */
function undescribedFields(): string[] {
  const missing: string[] = [];
  const seen = new Set<string>();
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        const parameter = p.$ref ? resolve(p.$ref) : p;
        if (!parameter.description && !parameter.schema?.description) missing.push(`${at} ${parameter.in} ${parameter.name}`);
      }
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
        missing.push(...undescribed(media.schema, `${at} request ${type}`, seen));
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
          missing.push(...undescribed(media.schema, `${at} ${status} ${type}`, seen));
        }
      }
    }
  }
  return [...new Set(missing)];
}

describe("the OpenAPI document's descriptions", () => {
  it("describes every parameter and every field of every request and response body, components included", () => {
    expect(undescribedFields()).toEqual([]);
  });
});

import {
  AdminAttachConnectionBody,
  AvailabilityDayQuery,
  DateTimeInput,
  isStorableText,
  isSupportedDate,
  MeetingListQuery,
  publicRoutes,
  RecommendBody,
  TimestampInput,
} from "@sched/proto";
import { describe, expect, it } from "vitest";
import { z } from "zod";

interface StringField {
  path: string;
  schema: z.ZodType;
}

/** The innermost schema a pipe starts from, past wrappers that only make a value optional. */
function entry(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) return entry(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodPipe) return entry(schema.in as z.ZodType);
  return schema;
}

/**
 * Every place of a request schema where a client's string lands, with the
 * schema that decides it (a pipe from a string is decided as a whole). A kind
 * of schema this walk does not know fails, so a new kind is looked at here first.
 */
function stringFields(schema: z.ZodType, path: string): StringField[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) return stringFields(schema.unwrap() as z.ZodType, path);
  if (schema instanceof z.ZodString) return [{ path, schema }];
  if (schema instanceof z.ZodPipe) return entry(schema) instanceof z.ZodString ? [{ path, schema }] : stringFields(schema.in as z.ZodType, path);
  if (schema instanceof z.ZodObject) return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, field]) => stringFields(field, path ? `${path}.${key}` : key));
  if (schema instanceof z.ZodArray) return stringFields(schema.element as z.ZodType, `${path}[]`);
  if (schema instanceof z.ZodTuple) return (schema.def.items as z.ZodType[]).flatMap((item, i) => stringFields(item, `${path}[${i}]`));
  if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).flatMap((option) => stringFields(option, path));
  if (schema instanceof z.ZodEnum || schema instanceof z.ZodLiteral || schema instanceof z.ZodBoolean || schema instanceof z.ZodNumber || schema instanceof z.ZodUndefined) return [];
  throw new Error(`${path}: a ${schema.def.type} schema; teach stringFields what strings it takes`);
}

/** Strings with a character storage refuses, some in the shape a field's format expects. */
function unstorableCandidates(field: StringField): string[] {
  const example = (z.globalRegistry.get(field.schema)?.example as string | undefined) ?? "";
  const shapes = ["", "a", example, "ana@example.com", "2030-03-06", "2030-03-06T10:00:00Z", "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE", "colleague"];
  return shapes.flatMap((s) => [`${s}\u0000`, `\u0000${s}`, `${s}\uD800`, `\uDC00${s}`]);
}

const fields = publicRoutes.flatMap((route) => stringFields(route.endpoint.request, "").map((field) => ({ route: `${route.method} ${route.path}`, ...field })));

describe("client strings", () => {
  it("finds the string fields of every route (the walk sees into bodies, queries and paths)", () => {
    const paths = new Set(fields.map((f) => `${f.route} ${f.path}`));
    for (const expected of ["PATCH /v1/me body.name", "GET /admin/v1/users query.email", "PATCH /admin/v1/api-keys/:id params.id", "POST /v1/meetings body.participants[]", "GET /v1/meetings query.startingAfter"]) {
      expect(paths).toContain(expected);
    }
  });

  it.each(fields.map((f) => [f.route, f.path, f] as const))("%s %s refuses NUL and unpaired surrogates", (_route, _path, field) => {
    const accepted = unstorableCandidates(field).filter((s) => field.schema.safeParse(s).success);
    expect(accepted).toEqual([]);
  });

  it("tells storable text from text Postgres cannot hold", () => {
    expect(isStorableText("Q4 plan \u00e9t\u00e9 \ud83d\udcc5 \u2028")).toBe(true);
    expect(isStorableText("a\u0000b")).toBe(false);
    expect(isStorableText("lone \ud800")).toBe(false);
    expect(isStorableText("\udcc5 reversed \ud83d")).toBe(false);
  });
});

describe("client dates", () => {
  it("supports years 1970 to 9998 in every form a date is written", () => {
    expect(isSupportedDate("1970-01-01")).toBe(true);
    expect(isSupportedDate("9998-12-31T23:59:59-18:00")).toBe(true);
    expect(isSupportedDate("1969-12-31")).toBe(false);
    expect(isSupportedDate("9999-01-01")).toBe(false);
    expect(isSupportedDate("0000-01-01T00:00Z")).toBe(false);
    // Text that is no ISO date is left to the field's own format check.
    expect(isSupportedDate("next monday")).toBe(true);
  });

  const refusals = (schema: z.ZodType, value: unknown) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it.each([
    ["a meeting's startTime", DateTimeInput, "9999-12-31T10:00:00Z", ""],
    ["a meeting's startTime", DateTimeInput, "1969-12-31T23:59:59Z", ""],
    ["the day view's date", AvailabilityDayQuery, { date: "9999-12-31" }, "date"],
    ["a recommendation's from", RecommendBody, { participants: ["a@example.com"], duration: "30 mins", from: "9999-12-01" }, "from"],
    ["a recommendation's to", RecommendBody, { participants: ["a@example.com"], duration: "30 mins", to: "9999-12-31T10:00" }, "to"],
    ["a connection's expiresAt", AdminAttachConnectionBody, { provider: "google", accessToken: "a", refreshToken: "r", expiresAt: "9999-12-31T00:00:00Z" }, "expiresAt"],
  ])("refuses %s out of range the same way", (_what, schema, value, path) => {
    expect(refusals(schema, value)).toEqual([`${path}: must be a date from 1970-01-01 to 9998-12-31`]);
  });

  it.each([
    [DateTimeInput, "9998-12-31T23:59:59-18:00"],
    [DateTimeInput, "1970-01-01T00:00:00+14:00"],
    [AvailabilityDayQuery, { date: "9998-12-31" }],
    [AvailabilityDayQuery, { date: "next monday" }],
    [RecommendBody, { participants: ["a@example.com"], duration: "30 mins", from: "9998-12-01", to: "9998-12-31" }],
  ])("accepts %# at the edges of the range", (schema, value) => {
    expect(refusals(schema, value)).toEqual([]);
  });

  it("takes a client's timestamp only when it is a real instant", () => {
    expect(TimestampInput.safeParse("2030-03-06T10:00:00Z").success).toBe(true);
    for (const bad of ["2030-02-30T10:00:00Z", "2030-13-01T10:00:00Z", "2030-03-06T24:00:00Z", "2030-03-06T10:60:00Z"]) {
      expect(TimestampInput.safeParse(bad).success, bad).toBe(false);
    }
  });

  it("refuses a page size that is no small integer", () => {
    for (const limit of ["0", "101", "1e2", "2.5", "-1", "99999999999999999999"]) expect(MeetingListQuery.safeParse({ limit }).success, limit).toBe(false);
  });
});

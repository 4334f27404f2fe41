import { expect, it } from "vitest";
import { isKeptStatement, StatementCache } from "../src/statementCache.js";

it("keeps the same text under two search paths as two statements, each under its own name", () => {
  const cache = new StatementCache<string>(10);
  const sql = "select * from notes where id = $1";
  const alpha = cache.nameFor();
  const beta = cache.nameFor();
  expect(alpha).not.toBe(beta);
  cache.kept("alpha", sql, alpha);
  cache.kept("beta", sql, beta);
  expect(cache.find("alpha", sql)).toBe(alpha);
  expect(cache.find("beta", sql)).toBe(beta);
  expect(cache.find("gamma", sql)).toBeUndefined();
});

it("gives up the least recently run statement beyond its capacity, and forgets one when told", () => {
  const cache = new StatementCache<string>(2);
  expect(cache.kept("s", "select 1 where $1", "a")).toEqual([]);
  expect(cache.kept("s", "select 2 where $1", "b")).toEqual([]);
  // Run again, the first becomes the most recent: the second goes first.
  expect(cache.find("s", "select 1 where $1")).toBe("a");
  expect(cache.kept("s", "select 3 where $1", "c")).toEqual(["b"]);
  expect(cache.find("s", "select 2 where $1")).toBeUndefined();
  expect(cache.size).toBe(2);
  expect(cache.forget("s", "select 1 where $1")).toBe("a");
  expect(cache.forget("s", "select 1 where $1")).toBeUndefined();
  expect(cache.size).toBe(1);
});

it("keeps reads and writes sent with parameters or a name, never session, transaction or schema commands", () => {
  expect(isKeptStatement("select * from notes where id = $1", 1, false)).toBe(true);
  expect(isKeptStatement("  WITH x as (select 1) select * from x", 0, true)).toBe(true);
  expect(isKeptStatement("insert into notes (id) values ($1)", 1, false)).toBe(true);
  expect(isKeptStatement("update notes set id = $1", 1, false)).toBe(true);
  expect(isKeptStatement("delete from notes where id = $1", 1, false)).toBe(true);
  expect(isKeptStatement("select 1", 0, false)).toBe(false);
  expect(isKeptStatement("BEGIN;", 0, false)).toBe(false);
  expect(isKeptStatement("set search_path to $1", 1, false)).toBe(false);
  expect(isKeptStatement("create table t (id text)", 0, true)).toBe(false);
  expect(isKeptStatement("selected_rows", 1, false)).toBe(false);
});

import { KnexTimeoutError } from "knex";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { isBackingServiceUnavailable } from "../src/index.js";

/** A server error as pg gives it: its SQLSTATE in `code`. */
function serverError(code: string, message: string): pg.DatabaseError {
  const err = new pg.DatabaseError(message, message.length, "error");
  err.code = code;
  err.severity = "FATAL";
  return err;
}

/** A socket error as node's net module gives it to pg. */
function socketError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code, errno: -111, syscall: "connect" });
}

describe("telling a database that is down or full from a failing request", () => {
  it.each([
    ["a server shutting down or restarted (57P01)", serverError("57P01", "terminating connection due to administrator command")],
    ["a server crashing (57P02)", serverError("57P02", "terminating connection because of crash of another server process")],
    ["a server starting up or shutting down (57P03)", serverError("57P03", "the database system is shutting down")],
    ["a server out of connection slots (53300)", serverError("53300", "sorry, too many clients already")],
    ["a connection failure (08006)", serverError("08006", "connection failure")],
    ["a connection that could not be made (08001)", serverError("08001", "could not connect to server")],
    ["a refused connection", socketError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")],
    ["a reset connection", socketError("ECONNRESET", "read ECONNRESET")],
    ["a host not found", socketError("ENOTFOUND", "getaddrinfo ENOTFOUND postgres")],
    ["pg's lost connection", new Error("Connection terminated unexpectedly")],
    ["pg's connection time-out", new Error("Connection terminated due to connection timeout")],
    ["pg's client after a lost connection", new Error("Client has encountered a connection error and is not queryable")],
    ["a statement ended by its time-out (57014)", serverError("57014", "canceling statement due to statement timeout")],
    ["a transaction ended as idle too long (25P03)", serverError("25P03", "terminating connection due to idle-in-transaction timeout")],
    ["knex's pool time-out", new KnexTimeoutError("Knex: Timeout acquiring a connection. The pool is probably full.")],
    ["a refusal wrapped as the cause", new Error("query failed", { cause: socketError("ECONNREFUSED", "connect ECONNREFUSED ::1:5432") })],
    ["one of several refused addresses", new AggregateError([socketError("ECONNREFUSED", "connect ECONNREFUSED ::1:5432"), socketError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")])],
  ])("counts %s as unavailable", (_what, err) => {
    expect(isBackingServiceUnavailable(err)).toBe(true);
  });

  it.each([
    ["a unique violation (23505)", serverError("23505", 'duplicate key value violates unique constraint "meetings_pkey"')],
    ["a syntax error (42601)", serverError("42601", 'syntax error at or near "selec"')],
    ["a statement cancelled on purpose (57014)", serverError("57014", "canceling statement due to user request")],
    ["a programming error", new TypeError("Cannot read properties of undefined (reading 'id')")],
    ["a plain error", new Error("something else")],
    ["a thrown string", "ECONNREFUSED"],
    ["nothing", undefined],
  ])("counts %s as a failure of its own", (_what, err) => {
    expect(isBackingServiceUnavailable(err)).toBe(false);
  });

});

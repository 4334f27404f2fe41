import { EVENT_TYPES, MODES, SCOPES, WEEKDAYS, type EventType, type Mode, type Scope, type Weekday, type WorkingHoursEntry } from "@sched/proto";

/** What a form field holds once express has read it: text, a list of texts, or nothing. */
type Field = string | string[] | undefined;
export type FormBody = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

function list(value: unknown): string[] {
  const field = value as Field;
  if (field === undefined) return [];
  return (Array.isArray(field) ? field : [field]).filter((v): v is string => typeof v === "string");
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

export interface NewKey {
  name: string;
  mode: Mode;
  scopes: Scope[];
}

/** The create-key form: a name (a default one when blank), a mode, and at least one scope. */
export function parseNewKey(body: FormBody, fallbackMode: Mode): Parsed<NewKey> {
  const name = text(body.name) || "API key";
  if (name.length > 200) return { ok: false, field: "name", message: "The name is longer than 200 characters." };
  const modeText = text(body.mode) || fallbackMode;
  const mode = MODES.find((m) => m === modeText);
  if (!mode) return { ok: false, field: "mode", message: "The mode is test or live." };
  const asked = list(body.scopes);
  const scopes = SCOPES.filter((s) => asked.includes(s));
  if (scopes.length === 0 || scopes.length !== new Set(asked).size) return { ok: false, field: "scopes", message: "Choose at least one scope from the list." };
  return { ok: true, value: { name, mode, scopes } };
}

/** Working hours as the profile form shows them: one `monday 09:00-17:00` a line. */
export function formatWorkingHours(entries: readonly WorkingHoursEntry[]): string {
  return entries.map((e) => `${e.day} ${e.start}-${e.end}`).join("\n");
}

const HOURS_LINE = /^([a-z]+)\s+(\d{2}:\d{2})\s*[-–]\s*(\d{2}:\d{2})$/;

/** Reads the working-hours text back; the account service checks the times themselves. */
export function parseWorkingHours(value: unknown): Parsed<WorkingHoursEntry[]> {
  const entries: WorkingHoursEntry[] = [];
  for (const [i, raw] of text(value).split(/\r?\n/).entries()) {
    const line = raw.trim().toLowerCase();
    if (line === "") continue;
    const match = HOURS_LINE.exec(line);
    const day = WEEKDAYS.find((d) => d === match?.[1]);
    if (!match || !day) return { ok: false, field: "workingHours", message: `Line ${i + 1} is not like "monday 09:00-17:00".` };
    entries.push({ day, start: match[2]!, end: match[3]! });
  }
  return { ok: true, value: entries };
}

export interface ProfileChanges {
  name: string;
  timezone: string;
  workingHours: WorkingHoursEntry[];
  preferences: { avoidDays: Weekday[]; bufferMinutes: number | null; maxMeetingsPerDay: number | null };
}

function optionalWholeNumber(value: unknown): number | null | "bad" {
  const t = text(value);
  if (t === "") return null;
  return /^\d{1,4}$/.test(t) ? Number(t) : "bad";
}

/** The profile form as a change to the account; ranges and zones are the account service's to check. */
export function parseProfile(body: FormBody): Parsed<ProfileChanges> {
  const hours = parseWorkingHours(body.workingHours);
  if (!hours.ok) return hours;
  const bufferMinutes = optionalWholeNumber(body.bufferMinutes);
  if (bufferMinutes === "bad") return { ok: false, field: "bufferMinutes", message: "The buffer is a whole number of minutes." };
  const maxMeetingsPerDay = optionalWholeNumber(body.maxMeetingsPerDay);
  if (maxMeetingsPerDay === "bad") return { ok: false, field: "maxMeetingsPerDay", message: "The most meetings a day is a whole number." };
  const avoid = list(body.avoidDays);
  return {
    ok: true,
    value: {
      name: text(body.name),
      timezone: text(body.timezone),
      workingHours: hours.value,
      preferences: { avoidDays: WEEKDAYS.filter((d) => avoid.includes(d)), bufferMinutes, maxMeetingsPerDay },
    },
  };
}

export interface NewEndpoint {
  url: string;
  /** `["*"]`: every type, present and future. */
  events: Array<EventType | "*">;
  description: string;
}

/** The create-endpoint form: a URL and the event types ("every type" wins over single ones); the webhooks service checks the URL itself. */
export function parseNewEndpoint(body: FormBody): Parsed<NewEndpoint> {
  const url = text(body.url);
  if (url === "") return { ok: false, field: "url", message: "Enter the URL events are sent to." };
  const asked = list(body.events);
  const types = EVENT_TYPES.filter((t) => asked.includes(t));
  if (asked.length !== new Set(asked).size || asked.some((a) => a !== "*" && !types.includes(a as EventType))) return { ok: false, field: "events", message: "Choose event types from the list." };
  if (asked.length === 0) return { ok: false, field: "events", message: "Choose at least one event type, or every type." };
  const description = text(body.description);
  if (description.length > 500) return { ok: false, field: "description", message: "The description is longer than 500 characters." };
  return { ok: true, value: { url, events: asked.includes("*") ? ["*"] : types, description } };
}

export interface CalDavAccount {
  serverUrl: string;
  username: string;
  password: string;
}

/** The CalDAV form: all three fields; the password is kept as typed (spaces may belong to it). */
export function parseCalDavAccount(body: FormBody): Parsed<CalDavAccount> {
  const serverUrl = text(body.serverUrl);
  const username = text(body.username);
  const password = typeof body.password === "string" ? body.password : "";
  if (serverUrl === "") return { ok: false, field: "serverUrl", message: "Enter the CalDAV server's address." };
  if (username === "") return { ok: false, field: "username", message: "Enter the account's user name." };
  if (password === "") return { ok: false, field: "password", message: "Enter the account's app password." };
  return { ok: true, value: { serverUrl, username, password } };
}

/** The calendars ticked as busy; the invites service checks that each is one of the connection's. */
export function parseBusyCalendars(body: FormBody): string[] {
  return [...new Set(list(body.busy))];
}

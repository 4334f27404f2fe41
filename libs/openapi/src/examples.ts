/**
 * Examples for the reference, by operation (`METHOD /path`): the request body
 * and the body of each success status. A test checks each against the schema
 * it illustrates, so they cannot drift from the contract unnoticed.
 */
export interface OperationExamples {
  request?: unknown;
  responses: Record<number, unknown>;
}

const ACCOUNT = {
  id: "usr_kY9pF34Qy6nB3Wwd25rq4f5z",
  email: "ann@example.com",
  name: "Ann Lee",
  timezone: "Europe/Berlin",
  workingHours: [
    { day: "monday", start: "09:00", end: "17:00" },
    { day: "tuesday", start: "09:00", end: "17:00" },
    { day: "wednesday", start: "09:00", end: "12:30" },
    { day: "wednesday", start: "13:30", end: "17:00" },
    { day: "thursday", start: "09:00", end: "17:00" },
    { day: "friday", start: "09:00", end: "15:00" },
  ],
  preferences: {
    preferredTimes: [{ start: "09:30", end: "12:00", days: ["tuesday", "thursday"] }],
    avoidDays: ["friday"],
    bufferMinutes: 15,
    maxMeetingsPerDay: 5,
  },
};

const MEETING = {
  id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE",
  title: "Quarterly planning",
  description: "Agenda: goals, staffing, budget.",
  startTime: "2030-03-04T09:00:00Z",
  duration: "1 hour",
  participants: ["bo@example.com", "cy@example.org"],
  status: "confirmed",
  organizer: "ann@example.com",
  createdAt: "2030-02-20T14:12:09Z",
};

const CONTACT = {
  id: "ctc_7HqW2mZp9LrX4nBv6TcK1sYd",
  email: "bo@example.com",
  name: "Bo Berg",
  relationship: "colleague",
  blocked: false,
  addedAt: "2030-02-18T08:30:00Z",
};

const ADMIN_USER = { id: ACCOUNT.id, email: ACCOUNT.email, name: ACCOUNT.name, timezone: ACCOUNT.timezone, createdAt: "2030-01-05T10:00:00Z" };

const CONNECTION = { id: "cal_7hQ2xN9sVbL4tRmP1aZcY8dK", provider: "google", accountEmail: "ann@example.com", status: "active", createdAt: "2030-02-20T14:13:02Z" };

const listItem = ({ description: _d, createdAt: _c, ...item }: typeof MEETING) => item;

export const EXAMPLES: Record<string, OperationExamples> = {
  "GET /v1/me": { responses: { 200: ACCOUNT } },
  "PATCH /v1/me": {
    request: { timezone: "Europe/Berlin", workingHours: ACCOUNT.workingHours, preferences: { avoidDays: ["friday"], maxMeetingsPerDay: 5 } },
    responses: { 200: ACCOUNT },
  },
  "GET /v1/meetings": {
    responses: {
      200: {
        data: [
          listItem(MEETING),
          { ...listItem(MEETING), id: "mtg_siC47wqaMl9Xvq2ZG4MzAOUQ", title: "1:1 Bo / Ann", startTime: "2030-03-05T13:30:00Z", duration: "30 mins", participants: ["bo@example.com"] },
        ],
        hasMore: true,
      },
    },
  },
  "POST /v1/meetings": {
    request: {
      title: "Quarterly planning",
      description: "Agenda: goals, staffing, budget.",
      duration: "1 hour",
      startTime: "2030-03-04T10:00:00",
      participants: ["bo@example.com", "Cy@Example.org"],
      sendInvites: true,
    },
    responses: { 201: MEETING },
  },
  "GET /v1/meetings/:id": { responses: { 200: MEETING } },
  "PATCH /v1/meetings/:id": {
    request: { startTime: "2030-03-04T14:00:00Z", participants: ["bo@example.com"] },
    responses: { 200: { ...MEETING, startTime: "2030-03-04T14:00:00Z", participants: ["bo@example.com"] } },
  },
  "DELETE /v1/meetings/:id": { responses: {} },
  "GET /v1/availability": {
    responses: {
      200: {
        date: "2030-03-06",
        timezone: "Europe/Berlin",
        slots: [
          { start: "09:00", end: "10:30", status: "free" },
          { start: "10:30", end: "11:00", status: "busy" },
          { start: "11:00", end: "12:30", status: "free" },
          { start: "13:30", end: "17:00", status: "free" },
        ],
      },
    },
  },
  "POST /v1/availability/recommended": {
    request: { participants: ["bo@example.com", "cy@example.org"], duration: "45 mins", timeRange: "morning", useAI: false },
    responses: {
      200: {
        slots: [
          {
            start: "2030-03-05T08:00:00Z",
            end: "2030-03-05T08:45:00Z",
            score: 0.92,
            reason: "Inside everyone's working hours, with a buffer to other meetings.",
            withinWorkingHours: ["ann@example.com", "bo@example.com"],
          },
          {
            start: "2030-03-06T09:15:00Z",
            end: "2030-03-06T10:00:00Z",
            score: 0.81,
            reason: "Inside everyone's working hours, on a lighter day.",
            withinWorkingHours: ["ann@example.com", "bo@example.com"],
          },
        ],
        consideredParticipants: ["bo@example.com"],
        rankedBy: "heuristic",
      },
    },
  },
  "GET /v1/contacts": {
    responses: {
      200: { data: [{ ...CONTACT, id: "ctc_Ze95b9eGe0vRBbgi09qynDAk", email: "dana@example.net", name: null, relationship: "client", addedAt: "2030-02-19T16:02:44Z" }, CONTACT] },
    },
  },
  "POST /v1/contacts": { request: { email: "bo@example.com", relationship: "colleague" }, responses: { 201: CONTACT } },
  "GET /v1/contacts/:id": { responses: { 200: CONTACT } },
  "PATCH /v1/contacts/:id": { request: { blocked: true }, responses: { 200: { ...CONTACT, blocked: true } } },
  "DELETE /v1/contacts/:id": { responses: {} },
  "POST /admin/v1/users": { request: { email: "ann@example.com", name: "Ann Lee", timezone: "Europe/Berlin" }, responses: { 201: ADMIN_USER } },
  "GET /admin/v1/users": { responses: { 200: { data: [ADMIN_USER] } } },
  "POST /admin/v1/users/:id/api-keys": {
    request: { mode: "test", scopes: ["meetings:read", "meetings:write"], name: "staging server" },
    responses: {
      201: {
        id: "key_y7AjzQHb6BAEcn6zJ4A3DdvH",
        key: "sk_test_6uEp3c4dsa7lC360A9y6YnD14TdDo9EgZmCnu77S",
        mode: "test",
        scopes: ["meetings:read", "meetings:write"],
        name: "staging server",
        createdAt: "2030-01-05T10:01:30Z",
      },
    },
  },
  "PATCH /admin/v1/api-keys/:id": {
    request: { rateLimits: { standardPerMinute: 1000, aiPerMinute: null } },
    responses: {
      200: {
        id: "key_y7AjzQHb6BAEcn6zJ4A3DdvH",
        mode: "test",
        scopes: ["meetings:read", "meetings:write"],
        name: "staging server",
        rateLimits: { standardPerMinute: 1000, aiPerMinute: null },
        createdAt: "2030-01-05T10:01:30Z",
        revokedAt: null,
      },
    },
  },
  "DELETE /admin/v1/api-keys/:id": { responses: { 200: { id: "key_y7AjzQHb6BAEcn6zJ4A3DdvH", revoked: true } } },
  "GET /v1/meetings/:id/invites": {
    responses: {
      200: {
        data: [
          { email: "bo@example.com", kind: "request", sequence: 2, state: "sent", channel: "google", attempts: 1, lastError: null, updatedAt: "2030-02-20T14:12:11Z" },
          { email: "cy@example.org", kind: "request", sequence: 2, state: "pending", channel: "google", attempts: 2, lastError: "Google: 503 Backend Error", updatedAt: "2030-02-20T14:12:14Z" },
          { email: "dee@example.com", kind: "cancel", sequence: 2, state: "sent", channel: "google", attempts: 1, lastError: null, updatedAt: "2030-02-20T14:12:11Z" },
        ],
      },
    },
  },
  "POST /v1/calendar-connections/google": {
    responses: {
      201: {
        authorizationUrl:
          "https://accounts.google.com/o/oauth2/v2/auth?access_type=offline&prompt=consent&scope=openid%20email%20https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcalendar.events&state=q3Jd9vX2kP0sT7nWb4mLcY8zR1aF6hGe5uQiN0oKxZs&response_type=code&client_id=1234.apps.googleusercontent.com&redirect_uri=https%3A%2F%2Fapi.example.com%2Fv1%2Fcalendar-connections%2Fgoogle%2Fcallback",
        expiresAt: "2030-02-20T14:22:09Z",
      },
    },
  },
  "GET /v1/calendar-connections/google/callback": { responses: { 200: CONNECTION } },
  "GET /v1/calendar-connections": { responses: { 200: { data: [CONNECTION] } } },
  "DELETE /v1/calendar-connections/:id": { responses: {} },
  "POST /admin/v1/users/:id/calendar-connections": {
    request: { provider: "google", accountEmail: "ann@example.com", accessToken: "ya29.a0AfB_byC2example", refreshToken: "1//0gExampleRefreshToken", expiresAt: "2030-02-20T15:12:09Z" },
    responses: { 201: CONNECTION },
  },
  "POST /admin/v1/users/:id/sign-in-links": {
    responses: { 201: { url: "https://api.example.com/dashboard/sign-in?token=sil_3bq2A9dLx7Vk0WmTc5YhR8nJ4sPe6uQf1gZo2iKaNbC", expiresAt: "2030-02-20T14:22:09Z" } },
  },
};

/**
 * Examples for the reference, by operation (`METHOD /path`): the request body
 * and the body of each success status. A test checks each against the schema
 * it illustrates, so they cannot drift from the contract unnoticed.
 */
export interface OperationExamples {
  request?: unknown;
  responses: Record<number, unknown>;
}

const TIME_OFF = {
  id: "off_3vN8qLxT5bR2mK9pW4cY7zHd",
  start: "2030-03-10T23:00:00Z",
  end: "2030-03-13T23:00:00Z",
  reason: "Skiing",
  createdAt: "2030-02-20T09:12:05Z",
};

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
  attendees: [
    { email: "bo@example.com", response: "accepted", respondedAt: "2030-02-20T15:02:41Z" },
    { email: "cy@example.org", response: "needsAction", respondedAt: null },
  ],
  recurrence: null,
  seriesId: null,
  originalStartTime: null,
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

const CONNECTION = {
  ...{ id: "cal_7hQ2xN9sVbL4tRmP1aZcY8dK", provider: "google", accountEmail: "ann@example.com", status: "active", createdAt: "2030-02-20T14:13:02Z" },
  ...{ serverUrl: null, default: false, busyCalendars: null },
};

const EVENT = {
  id: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF",
  type: "meeting.updated",
  createdAt: "2030-02-21T09:00:00Z",
  mode: "live",
  data: { object: MEETING, previous: { startTime: "2030-03-03T09:00:00Z" } },
};

const WEBHOOK_ENDPOINT = {
  id: "whe_5kT2sVnB8xR1tLmP4aZcY7dQ",
  url: "https://example.com/webhooks/scheduling",
  events: ["*"],
  description: "Sync to our CRM",
  enabled: true,
  mode: "live",
  createdAt: "2030-02-20T14:20:00Z",
};

const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwUQ7bM0kHbJc=";

const DELIVERY = {
  id: "whd_8pL3sVnB2xR7tKmQ0aZcY1dW",
  eventId: EVENT.id,
  eventType: EVENT.type,
  state: "delivered",
  attempts: [
    { at: "2030-02-21T09:00:01Z", status: 503, error: "the endpoint answered 503", durationMs: 84 },
    { at: "2030-02-21T09:00:06Z", status: 200, error: null, durationMs: 61 },
  ],
  nextAttemptAt: null,
  createdAt: "2030-02-21T09:00:00Z",
};

const listItem = ({ description: _d, createdAt: _c, attendees: _a, ...item }: typeof MEETING) => item;

export const EXAMPLES: Record<string, OperationExamples> = {
  "GET /v1/me": { responses: { 200: ACCOUNT } },
  "PATCH /v1/me": {
    request: { timezone: "Europe/Berlin", workingHours: ACCOUNT.workingHours, preferences: { avoidDays: ["friday"], maxMeetingsPerDay: 5 } },
    responses: { 200: ACCOUNT },
  },
  "POST /v1/me/time-off": { request: { start: "2030-03-11", end: "2030-03-13", reason: "Skiing" }, responses: { 201: TIME_OFF } },
  "GET /v1/me/time-off": {
    responses: { 200: { data: [TIME_OFF, { ...TIME_OFF, id: "off_Qm4T8sLw2ZxB7nRc5KdV9hJp", start: "2030-03-20T12:00:00Z", end: "2030-03-20T16:00:00Z", reason: "" }] } },
  },
  "DELETE /v1/me/time-off/:id": { responses: {} },
  "GET /v1/meetings": {
    responses: {
      200: {
        data: [
          listItem(MEETING),
          // An occurrence of a weekly series.
          {
            ...listItem(MEETING),
            ...{ id: "mtg_siC47wqaMl9Xvq2ZG4MzAOUQ_20300305T133000Z", title: "1:1 Bo / Ann", startTime: "2030-03-05T13:30:00Z", duration: "30 mins", participants: ["bo@example.com"] },
            ...{ seriesId: "mtg_siC47wqaMl9Xvq2ZG4MzAOUQ", originalStartTime: "2030-03-05T13:30:00Z" },
          },
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
    responses: { 201: { ...MEETING, attendees: MEETING.attendees.map((a) => ({ ...a, response: "needsAction", respondedAt: null })) } },
  },
  "GET /v1/meetings/:id": { responses: { 200: MEETING } },
  "PATCH /v1/meetings/:id": {
    request: { startTime: "2030-03-04T14:00:00Z", participants: ["bo@example.com"] },
    // A new time asks everyone again.
    responses: { 200: { ...MEETING, startTime: "2030-03-04T14:00:00Z", participants: ["bo@example.com"], attendees: [{ email: "bo@example.com", response: "needsAction", respondedAt: null }] } },
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
  "POST /v1/availability/free-busy": {
    request: { participants: ["ann@example.com", "bo@example.com", "dana@example.net"], from: "2030-03-04", to: "2030-03-05" },
    responses: {
      200: {
        from: "2030-03-03T23:00:00Z",
        to: "2030-03-05T23:00:00Z",
        people: [
          { email: "ann@example.com", busy: [{ start: "2030-03-04T09:00:00Z", end: "2030-03-04T10:00:00Z" }], busyComplete: true },
          { email: "bo@example.com", busy: [{ start: "2030-03-04T08:30:00Z", end: "2030-03-04T09:00:00Z" }, { start: "2030-03-05T00:00:00Z", end: "2030-03-05T23:00:00Z" }], busyComplete: true },
        ],
        notVisible: ["dana@example.net"],
      },
    },
  },
  "POST /v1/availability/recommended": {
    request: { participants: ["bo@example.com"], optionalParticipants: ["cy@example.org"], duration: "45 mins", timeRange: "morning", minimumNoticeMinutes: 120, useAI: false },
    responses: {
      200: {
        slots: [
          {
            start: "2030-03-05T08:00:00Z",
            end: "2030-03-05T08:45:00Z",
            score: 0.92,
            reason: "Tomorrow everyone required is free, inside working hours for all 3 people, at least 30 minutes from other meetings. Optional: cy@example.org can come.",
            withinWorkingHours: ["ann@example.com", "bo@example.com", "cy@example.org"],
          },
          {
            start: "2030-03-06T09:15:00Z",
            end: "2030-03-06T10:00:00Z",
            score: 0.81,
            reason: "In 2 days everyone required is free, inside working hours for both people, at least 30 minutes from other meetings. Optional: none can come; cy@example.org cannot.",
            withinWorkingHours: ["ann@example.com", "bo@example.com"],
            availableParticipants: ["ann@example.com", "bo@example.com"],
          },
        ],
        consideredParticipants: ["bo@example.com"],
        consideredOptionalParticipants: ["cy@example.org"],
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
          { meetingId: MEETING.id, email: "bo@example.com", kind: "request", sequence: 2, state: "sent", channel: "google", attempts: 1, lastError: null, updatedAt: "2030-02-20T14:12:11Z", response: "accepted", respondedAt: "2030-02-20T15:02:41Z" },
          { meetingId: MEETING.id, email: "cy@example.org", kind: "request", sequence: 2, state: "pending", channel: "google", attempts: 2, lastError: "Google: 503 Backend Error", updatedAt: "2030-02-20T14:12:14Z", response: "needsAction", respondedAt: null },
          { meetingId: MEETING.id, email: "dee@example.com", kind: "cancel", sequence: 2, state: "sent", channel: "google", attempts: 1, lastError: null, updatedAt: "2030-02-20T14:12:11Z", response: null, respondedAt: null },
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
  "POST /v1/calendar-connections/microsoft": {
    responses: {
      201: {
        authorizationUrl:
          "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=6f1c2a4e-8b3d-4e5f-9a7c-1d2e3f4a5b6c&response_type=code&redirect_uri=https%3A%2F%2Fapi.example.com%2Fv1%2Fcalendar-connections%2Fmicrosoft%2Fcallback&response_mode=query&scope=openid+email+offline_access+Calendars.ReadWrite&prompt=select_account&state=Vb7Kq2xN9sLp4tRmW1aZcY8dE3fG6hJ0uQiO5nMkXyT",
        expiresAt: "2030-02-20T14:22:09Z",
      },
    },
  },
  "GET /v1/calendar-connections/microsoft/callback": { responses: { 200: { ...CONNECTION, id: "cal_Wp4nR8sVbL2tKmQ7aZcY1dXh", provider: "microsoft", accountEmail: "ann@contoso.com" } } },
  "GET /v1/calendar-connections": { responses: { 200: { data: [CONNECTION] } } },
  "POST /v1/provider-notifications/google": { responses: {} },
  "POST /v1/provider-notifications/microsoft": {
    request: { value: [{ subscriptionId: "7f105c7d-2dc5-4530-97cd-4e7ae6534c07", clientState: "Qm9vb2sgb2YgdGhlIGNoYW5uZWwncyBzZWNyZXQ", changeType: "updated", resource: "Users/4e9d…/Events/AAMkAG…" }] },
    responses: { 200: "Validation: Testing client application reachability for subscription Request-Id: 3b3f5c1e-8a5d-4f3e-9c1b-2d4e6f8a0b1c" },
  },
  "DELETE /v1/calendar-connections/:id": { responses: {} },
  "POST /v1/calendar-connections/caldav": {
    request: { serverUrl: "https://caldav.fastmail.com/", username: "ann@example.com", password: "abcd-efgh-ijkl-mnop" },
    responses: { 201: { ...CONNECTION, id: "cal_Qm3vT8xLp2Zr6Wn1Kd9Hs4Bf", provider: "caldav", serverUrl: "https://caldav.fastmail.com/" } },
  },
  "GET /v1/calendar-connections/:id/calendars": {
    responses: {
      200: {
        data: [
          { id: "https://caldav.fastmail.com/dav/calendars/user/ann@example.com/work/", name: "Work", busy: true },
          { id: "https://caldav.fastmail.com/dav/calendars/user/ann@example.com/family/", name: "Family", busy: false },
        ],
      },
    },
  },
  "PATCH /v1/calendar-connections/:id": {
    request: { busyCalendars: ["https://caldav.fastmail.com/dav/calendars/user/ann@example.com/work/"], default: true },
    responses: {
      200: {
        ...CONNECTION,
        id: "cal_Qm3vT8xLp2Zr6Wn1Kd9Hs4Bf",
        provider: "caldav",
        serverUrl: "https://caldav.fastmail.com/",
        default: true,
        busyCalendars: ["https://caldav.fastmail.com/dav/calendars/user/ann@example.com/work/"],
      },
    },
  },
  "POST /admin/v1/users/:id/calendar-connections": {
    request: { provider: "google", accountEmail: "ann@example.com", accessToken: "ya29.a0AfB_byC2example", refreshToken: "1//0gExampleRefreshToken", expiresAt: "2030-02-20T15:12:09Z" },
    responses: { 201: CONNECTION },
  },
  "GET /v1/events": { responses: { 200: { data: [EVENT], hasMore: false } } },
  "GET /v1/events/:id": { responses: { 200: EVENT } },
  "POST /v1/events/:id/resend": { responses: { 202: { data: [{ ...DELIVERY, state: "pending", attempts: [], nextAttemptAt: "2030-02-22T10:00:00Z", createdAt: "2030-02-22T10:00:00Z", id: "whd_2mR7sVnB4xL9tKmQ1aZcY3dP" }] } } },
  "POST /v1/webhook-endpoints": {
    request: { url: WEBHOOK_ENDPOINT.url, events: ["*"], description: WEBHOOK_ENDPOINT.description },
    responses: { 201: { ...WEBHOOK_ENDPOINT, secret: WEBHOOK_SECRET } },
  },
  "GET /v1/webhook-endpoints": { responses: { 200: { data: [WEBHOOK_ENDPOINT] } } },
  "GET /v1/webhook-endpoints/:id": { responses: { 200: WEBHOOK_ENDPOINT } },
  "PATCH /v1/webhook-endpoints/:id": { request: { events: ["meeting.created", "meeting.cancelled"] }, responses: { 200: { ...WEBHOOK_ENDPOINT, events: ["meeting.created", "meeting.cancelled"] } } },
  "DELETE /v1/webhook-endpoints/:id": { responses: {} },
  "POST /v1/webhook-endpoints/:id/roll-secret": { responses: { 200: { secret: "whsec_Zk3pQ8vN2rT5wY7bC1dF4gH6jK9mL0nP2qS4uV6xW8y=", previousSecretExpiresAt: "2030-02-23T10:00:00Z" } } },
  "GET /v1/webhook-endpoints/:id/deliveries": { responses: { 200: { data: [DELIVERY], hasMore: false } } },
  "POST /admin/v1/users/:id/sign-in-links": {
    responses: { 201: { url: "https://api.example.com/dashboard/sign-in?token=sil_3bq2A9dLx7Vk0WmTc5YhR8nJ4sPe6uQf1gZo2iKaNbC", expiresAt: "2030-02-20T14:22:09Z" } },
  },
};

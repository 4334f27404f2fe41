import type { meetingCreated, PayloadOf } from "@sched/proto";

/** A create's event as the meetings service writes it: three participants, a description, no series. */
export function createdEvent(n: number): PayloadOf<typeof meetingCreated> {
  const id = `mtg_bench${String(n).padStart(19, "0")}`;
  const participants = ["ana@example.com", "bo@example.com", "cy@example.com"];
  return {
    eventId: `evt_${id}`,
    meetingId: id,
    mode: "live",
    organizer: { userId: "usr_bench00000000000000000", email: "org@example.com" },
    meeting: {
      id,
      title: `Planning ${n}`,
      description: "Quarterly planning: the roadmap, the budget and who does what.",
      startTime: "2031-01-01T10:00:00Z",
      duration: "30 mins",
      participants,
      status: "confirmed",
      organizer: "org@example.com",
      createdAt: "2031-01-01T09:00:00Z",
      attendees: [],
      recurrence: null,
      seriesId: null,
      originalStartTime: null,
    },
    sequence: 1,
    sendInvites: true,
    occurredAt: "2031-01-01T09:00:00Z",
  };
}

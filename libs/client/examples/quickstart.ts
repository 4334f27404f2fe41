// Creates a meeting, lists the calendar and reads the day, with the typed client.
//   SCHED_API_URL=http://localhost:8080 SCHED_API_KEY=sk_test_… node quickstart.ts   (Node.js 23.6 or later runs TypeScript as it is)
import { createSchedulingClient } from "@sched/client";

const client = createSchedulingClient({
  baseUrl: process.env.SCHED_API_URL ?? "http://localhost:8080",
  apiKey: process.env.SCHED_API_KEY ?? "",
});

// A naive time is read in the user's own time zone. 10:00 on the first working day after today
// (Monday to Friday, the default working hours, so the day view below shows it) is never in the past.
const next = new Date(Date.now() + 24 * 3_600_000);
while (next.getUTCDay() === 0 || next.getUTCDay() === 6) next.setUTCDate(next.getUTCDate() + 1);
const workday = next.toISOString().slice(0, 10);
const created = await client.POST("/v1/meetings", {
  // Retrying with the same key never creates the meeting twice.
  params: { header: { "Idempotency-Key": `quickstart-${workday}` } },
  body: { title: "Quickstart", duration: "30 mins", startTime: `${workday}T10:00:00`, participants: ["ana@example.com"] },
});
if (created.error) throw new Error(`${created.error.error.code}: ${created.error.error.message}`);
console.log("created", created.data.id, created.data.startTime);

const { data: page } = await client.GET("/v1/meetings", { params: { query: { filter: "upcoming", limit: 10 } } });
console.log("upcoming", page?.data.map((m) => `${m.startTime} ${m.title}`));

const { data: day } = await client.GET("/v1/availability", { params: { query: { date: workday } } });
console.log("workday", day?.slots.map((s) => `${s.start}-${s.end} ${s.status}`).join(", "));

import type { Migration } from "@sched/db";

/**
 * Whether a consent was started in the dashboard: its callback then sends
 * the browser back to the dashboard's calendars page instead of answering
 * JSON. A flag, not an address: the page is the deployment's own, from
 * configuration, so nothing a request says can pick where the browser goes.
 */
export const dashboardConsents: Migration = {
  name: "009_dashboard_consents",
  async up(db) {
    await db.raw("alter table oauth_states add column from_dashboard boolean not null default false");
  },
};

import { createHash } from "node:crypto";
import { inviteFailed, inviteSent, type PayloadOf } from "@sched/proto";
import type { DeliveryRecord } from "../db/queries.js";
import { deliveryView } from "./inviteView.js";
import type { MeetingChange } from "./plan.js";

/** The change a settled delivery belongs to, in the fields its event names. */
export type SettlingChange = Pick<MeetingChange, "meetingId" | "sequence" | "mode" | "organizer">;

export interface InviteEvent {
  def: typeof inviteSent | typeof inviteFailed;
  payload: PayloadOf<typeof inviteSent>;
  msgId: string;
}

/**
 * The bus id of a delivery's settlement: a delivery settles once, so one id
 * per delivery and outcome, and a republished row is dropped by the bus. A
 * digest, as an address may be long and consumers keep the id in 64
 * characters. recordChanges spells the same id in SQL for simulated deliveries.
 */
export function settlementId(row: Pick<DeliveryRecord, "meetingId" | "sequence" | "kind" | "email" | "state">): string {
  return `invite_${createHash("md5").update(`${row.state}.${row.meetingId}.${row.sequence}.${row.kind}.${row.email}`).digest("hex")}`;
}

/** The event a delivery's settlement publishes: `invite.sent` (or simulated) or `invite.failed`; none while it is pending. */
export function inviteEventOf(change: SettlingChange, row: DeliveryRecord): InviteEvent | undefined {
  if (row.state === "pending") return undefined;
  const invite = deliveryView(row);
  const msgId = settlementId(row);
  return {
    def: row.state === "failed" ? inviteFailed : inviteSent,
    msgId,
    payload: { eventId: msgId, meetingId: change.meetingId, mode: change.mode, organizer: change.organizer, invite, occurredAt: invite.updatedAt },
  };
}

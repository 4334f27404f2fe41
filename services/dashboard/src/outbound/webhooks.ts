import type { Bus } from "@sched/bus";
import {
  eventsResend,
  ResendQueued,
  SecretRolled,
  webhookDeliveriesList,
  WebhookDeliveryList,
  WebhookEndpoint,
  webhookEndpointsCreate,
  WebhookEndpointCreated,
  webhookEndpointsDelete,
  webhookEndpointsGet,
  WebhookEndpointList,
  webhookEndpointsList,
  webhookEndpointsRollSecret,
  webhookEndpointsUpdate,
  type Mode,
  type UserProfile,
} from "@sched/proto";
import type { z } from "zod";
import type { NewEndpoint } from "../domain/forms.js";
import { actingFor } from "./caller.js";

/**
 * The webhooks service's public endpoints, asked over the bus for the
 * signed-in user in the mode the dashboard shows: the service checks that an
 * endpoint is theirs and of that mode, as it does for a key.
 */
export class WebhooksClient {
  constructor(private readonly bus: Bus) {}

  async list(user: UserProfile, mode: Mode): Promise<WebhookEndpoint[]> {
    const reply = await this.bus.request(webhookEndpointsList, { params: {}, query: {}, body: undefined }, { caller: actingFor(user, mode) });
    return WebhookEndpointList.parse(reply.body).data;
  }

  async get(user: UserProfile, mode: Mode, id: string): Promise<WebhookEndpoint> {
    const reply = await this.bus.request(webhookEndpointsGet, { params: { id }, query: {}, body: undefined }, { caller: actingFor(user, mode) });
    return WebhookEndpoint.parse(reply.body);
  }

  /** The endpoint with its signing secret, which nothing shows again. */
  async create(user: UserProfile, mode: Mode, endpoint: NewEndpoint): Promise<z.infer<typeof WebhookEndpointCreated>> {
    const reply = await this.bus.request(webhookEndpointsCreate, { params: {}, query: {}, body: endpoint }, { caller: actingFor(user, mode) });
    return WebhookEndpointCreated.parse(reply.body);
  }

  /** Turns sending on or off; on again, the deliveries waiting resume. */
  async setEnabled(user: UserProfile, mode: Mode, id: string, enabled: boolean): Promise<WebhookEndpoint> {
    const reply = await this.bus.request(webhookEndpointsUpdate, { params: { id }, query: {}, body: { enabled } }, { caller: actingFor(user, mode) });
    return WebhookEndpoint.parse(reply.body);
  }

  async remove(user: UserProfile, mode: Mode, id: string): Promise<void> {
    await this.bus.request(webhookEndpointsDelete, { params: { id }, query: {}, body: undefined }, { caller: actingFor(user, mode) });
  }

  async rollSecret(user: UserProfile, mode: Mode, id: string): Promise<z.infer<typeof SecretRolled>> {
    const reply = await this.bus.request(webhookEndpointsRollSecret, { params: { id }, query: {}, body: undefined }, { caller: actingFor(user, mode) });
    return SecretRolled.parse(reply.body);
  }

  async deliveries(user: UserProfile, mode: Mode, id: string, limit: number): Promise<z.infer<typeof WebhookDeliveryList>> {
    const reply = await this.bus.request(webhookDeliveriesList, { params: { id }, query: { limit: String(limit) }, body: undefined }, { caller: actingFor(user, mode) });
    return WebhookDeliveryList.parse(reply.body);
  }

  /** Sends an event again to every enabled endpoint it is sent to; how many deliveries that queued. */
  async resend(user: UserProfile, mode: Mode, eventId: string): Promise<number> {
    const reply = await this.bus.request(eventsResend, { params: { id: eventId }, query: {}, body: undefined }, { caller: actingFor(user, mode) });
    return ResendQueued.parse(reply.body).data.length;
  }
}

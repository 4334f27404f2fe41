import { bind, type EndpointBinding, requireCaller } from "@sched/bus";
import { writeOnce } from "@sched/db/idempotent-writes";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId, type Sealer } from "@sched/ids";
import {
  webhookDeliveriesList,
  webhookEndpointsCreate,
  webhookEndpointsDelete,
  webhookEndpointsGet,
  webhookEndpointsList,
  webhookEndpointsRollSecret,
  webhookEndpointsUpdate,
  type Mode,
} from "@sched/proto";
import { countEndpoints, deleteEndpoint, deliverySeq, findEndpoint, insertEndpoint, listDeliveries, listEndpoints, rollSecret, updateEndpoint } from "../db/queries.js";
import { urlRefusal } from "../domain/endpointUrl.js";
import type { SecretCipher } from "../domain/secretCipher.js";
import { newSigningSecret, ROLLED_SECRET_VALID_MS } from "../domain/secrets.js";
import { deliveryView, endpointView, formatTimestamp } from "../domain/views.js";
import { hostRefusal } from "../outbound/post.js";

const DEFAULT_PAGE_SIZE = 20;

/** Endpoints a user may have in each mode: every event is sent to each, so the count bounds one user's fan-out. */
const MAX_ENDPOINTS = 16;

export interface EndpointDeps {
  db: Knex;
  cipher: SecretCipher;
  /** Seals the answers kept under an Idempotency-Key: they carry the secret shown once. */
  replies: Sealer;
  allowPrivate: boolean;
  /** An endpoint was turned on again: its waiting deliveries may go. */
  resumed: () => void;
}

/** The URL as it is stored, or a 400 naming `url` when it may not be used. */
async function checkedUrl(text: string, mode: Mode, allowPrivate: boolean): Promise<string> {
  const url = new URL(text);
  const refusal = urlRefusal(url, mode, allowPrivate) ?? (await hostRefusal(url, allowPrivate));
  if (refusal) throw new AppError("invalid_request", `Invalid url: ${refusal}.`, { param: "url" });
  return url.href;
}

/** Every type, spelled `*`, when none is named. */
const eventFilters = (events: readonly string[] | undefined): string[] => (events === undefined ? ["*"] : [...new Set(events)]);

/**
 * The webhook endpoints API (api-decisions part 12). An endpoint belongs to
 * its user and mode: a test key sees and changes only test endpoints, and
 * anyone else's is 404. The secret is sealed at rest and shown only when
 * made (at creation and on roll).
 */
export function endpointBindings(deps: EndpointDeps): EndpointBinding[] {
  const { db, cipher, replies, allowPrivate } = deps;
  const owned = async (userId: string, mode: Mode, id: string) => {
    const endpoint = isId("whe", id) ? await findEndpoint(db, userId, mode, id) : undefined;
    if (!endpoint) throw notFound("webhook endpoint");
    return endpoint;
  };

  return [
    bind(webhookEndpointsCreate, async ({ body }, ctx) => {
      const caller = requireCaller(ctx);
      const url = await checkedUrl(body.url, caller.mode, allowPrivate);
      const route = { method: "POST", path: "/v1/webhook-endpoints", body };
      const create = async (trx: Knex) => {
        if ((await countEndpoints(trx, caller.userId, caller.mode)) >= MAX_ENDPOINTS) {
          throw new AppError("invalid_request", `Too many webhook endpoints: at most ${MAX_ENDPOINTS} in each mode; remove one first.`);
        }
        const id = newId("whe");
        const secret = newSigningSecret();
        const endpoint = await insertEndpoint(trx, { id, userId: caller.userId, mode: caller.mode, url, events: eventFilters(body.events), description: body.description ?? "", sealedSecret: cipher.seal(secret, id) });
        return { status: 201 as const, body: { ...endpointView(endpoint), secret } };
      };
      return writeOnce(db, ctx, route, create, { sealer: replies });
    }),

    bind(webhookEndpointsList, async (_request, ctx) => {
      const caller = requireCaller(ctx);
      return { status: 200, body: { data: (await listEndpoints(db, caller.userId, caller.mode)).map(endpointView) } };
    }),

    bind(webhookEndpointsGet, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      return { status: 200, body: endpointView(await owned(caller.userId, caller.mode, params.id)) };
    }),

    bind(webhookEndpointsUpdate, async ({ params, body }, ctx) => {
      const caller = requireCaller(ctx);
      await owned(caller.userId, caller.mode, params.id);
      const url = body.url === undefined ? undefined : await checkedUrl(body.url, caller.mode, allowPrivate);
      const updated = await updateEndpoint(db, caller.userId, caller.mode, params.id, {
        ...(url !== undefined ? { url } : {}),
        ...(body.events !== undefined ? { events: eventFilters(body.events) } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      });
      if (!updated) throw notFound("webhook endpoint");
      if (body.enabled) deps.resumed();
      return { status: 200, body: endpointView(updated) };
    }),

    bind(webhookEndpointsDelete, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      if (!isId("whe", params.id) || !(await deleteEndpoint(db, caller.userId, caller.mode, params.id))) throw notFound("webhook endpoint");
      return { status: 204 };
    }),

    bind(webhookEndpointsRollSecret, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      const endpoint = await owned(caller.userId, caller.mode, params.id);
      const route = { method: "POST", path: `/v1/webhook-endpoints/${params.id}/roll-secret`, body: undefined };
      const roll = async (trx: Knex) => {
        const secret = newSigningSecret();
        const previousExpiresAt = new Date(Date.now() + ROLLED_SECRET_VALID_MS);
        await rollSecret(trx, endpoint.id, cipher.seal(secret, endpoint.id), endpoint.sealedSecret, previousExpiresAt);
        return { status: 200 as const, body: { secret, previousSecretExpiresAt: formatTimestamp(previousExpiresAt) } };
      };
      return writeOnce(db, ctx, route, roll, { sealer: replies });
    }),

    bind(webhookDeliveriesList, async ({ params, query }, ctx) => {
      const caller = requireCaller(ctx);
      const endpoint = await owned(caller.userId, caller.mode, params.id);
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      let afterSeq: number | undefined;
      if (query.startingAfter !== undefined) {
        afterSeq = isId("whd", query.startingAfter) ? await deliverySeq(db, endpoint.id, query.startingAfter) : undefined;
        if (afterSeq === undefined) throw new AppError("invalid_request", "Invalid startingAfter: no delivery with this id to this endpoint.", { param: "startingAfter" });
      }
      const rows = await listDeliveries(db, { endpointId: endpoint.id, limit: limit + 1, ...(afterSeq !== undefined ? { afterSeq } : {}) });
      return { status: 200, body: { data: rows.slice(0, limit).map(deliveryView), hasMore: rows.length > limit } };
    }),
  ];
}

import { EVENT_TYPES, type WebhookDelivery, type WebhookEndpoint } from "@sched/proto";
import { html, type SafeHtml } from "../html.js";
import { BASE, csrfField, page, shownOnce, stamp, type Viewer } from "./layout.js";

export interface EndpointsView {
  endpoints: WebhookEndpoint[];
  /** The endpoint just made, with its secret shown this once. */
  created?: { url: string; secret: string };
  error?: string;
  /** What the form held when it was refused, so nothing typed is lost. */
  form?: { url: string; description: string; events: string[] };
}

const eventsText = (events: readonly string[]) => (events.includes("*") ? "Every event type" : events.join(", "));

/** Enabled or disabled, in words as well as colour. */
function stateBadge(endpoint: WebhookEndpoint): SafeHtml {
  return endpoint.enabled ? html`<span class="badge on">Enabled</span>` : html`<span class="badge off">Disabled</span>`;
}

export function endpointsPage(viewer: Viewer, view: EndpointsView): SafeHtml {
  const form = view.form ?? { url: "", description: "", events: ["*"] };
  return page(
    viewer,
    "webhooks",
    "Webhook endpoints",
    html`${view.created ? shownOnce({ id: "new-secret", title: `The signing secret of ${view.created.url}`, value: view.created.secret, copyLabel: "Copy secret" }) : ""}
<section class="card" aria-labelledby="create-title">
<h2 id="create-title">Add a ${viewer.mode} endpoint</h2>
<form method="post" action="${BASE}/webhooks">
  ${csrfField(viewer.csrfToken)}
  ${view.error ? html`<p class="error" role="alert" id="endpoint-error">${view.error}</p>` : ""}
  <label for="endpoint-url">Endpoint URL</label>
  <input id="endpoint-url" name="url" type="url" required maxlength="2048" value="${form.url}" placeholder="https://example.com/webhooks" aria-describedby="endpoint-url-hint${view.error ? " endpoint-error" : ""}"${view.error ? html` aria-invalid="true"` : ""}>
  <p id="endpoint-url-hint" class="hint">${viewer.mode === "live" ? "Live endpoints must use https." : "Test endpoints receive test events only."} Events are POSTed here, signed as Standard Webhooks.</p>
  <label for="endpoint-description">Description (optional)</label>
  <input id="endpoint-description" name="description" type="text" maxlength="500" value="${form.description}">
  <fieldset><legend>Event types</legend>
    <label><input type="checkbox" name="events" value="*"${form.events.includes("*") ? html` checked` : ""}> Every event type, present and future</label>
    ${EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="events" value="${t}"${form.events.includes(t) ? html` checked` : ""}> <code>${t}</code></label>`)}
  </fieldset>
  <button type="submit">Add endpoint</button>
</form>
</section>
<section aria-labelledby="list-title">
<h2 id="list-title">Your ${viewer.mode} endpoints</h2>
${view.endpoints.length === 0
  ? html`<p>No ${viewer.mode} endpoints yet.</p>`
  : html`<table>
<thead><tr><th scope="col">URL</th><th scope="col">Event types</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"><span class="skip">Details</span></th></tr></thead>
<tbody>
${view.endpoints.map(
  (e) => html`<tr>
<td><span class="mono">${e.url}</span>${e.description ? html`<div class="hint">${e.description}</div>` : ""}</td><td>${eventsText(e.events)}</td><td>${stateBadge(e)}</td><td>${stamp(e.createdAt)}</td>
<td><a href="${BASE}/webhooks/${e.id}" aria-label="Deliveries and settings of ${e.url}">Deliveries and settings</a></td>
</tr>`,
)}
</tbody></table>`}
</section>`,
  );
}

export interface EndpointView {
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  hasMore: boolean;
  /** The new secret after a roll, shown this once. */
  rolled?: { secret: string; previousSecretExpiresAt: string };
  notice?: string;
}

const DELIVERY_STATES: Record<WebhookDelivery["state"], SafeHtml> = {
  pending: html`<span class="badge plain">Pending</span>`,
  delivered: html`<span class="badge on">Delivered</span>`,
  failed: html`<span class="badge off">Failed</span>`,
};

function deliveryBlock(viewer: Viewer, endpoint: WebhookEndpoint, d: WebhookDelivery): SafeHtml {
  const next = d.nextAttemptAt && (endpoint.enabled ? html`; next attempt ${stamp(d.nextAttemptAt)}` : "; it waits until the endpoint is enabled again");
  return html`<article class="delivery" aria-labelledby="dlv-${d.id}">
<h3 id="dlv-${d.id}"><code>${d.eventType}</code> · <span class="mono">${d.eventId}</span> ${DELIVERY_STATES[d.state]}</h3>
<p class="hint">Queued ${stamp(d.createdAt)}${next}.</p>
${d.attempts.length === 0
  ? html`<p>No attempt yet.</p>`
  : html`<table>
<caption class="skip">Attempts to deliver ${d.eventId}</caption>
<thead><tr><th scope="col">Time</th><th scope="col" class="num">Response code</th><th scope="col">Error</th><th scope="col" class="num">Duration</th></tr></thead>
<tbody>${d.attempts.map((a) => html`<tr><td>${stamp(a.at)}</td><td class="num">${a.status ?? "none"}</td><td>${a.error ?? ""}</td><td class="num">${a.durationMs} ms</td></tr>`)}</tbody>
</table>`}
${endpoint.enabled
  ? html`<form method="post" action="${BASE}/webhooks/${endpoint.id}/resend">${csrfField(viewer.csrfToken)}<input type="hidden" name="eventId" value="${d.eventId}">
<button type="submit" class="secondary" aria-label="Resend ${d.eventType} ${d.eventId}">Resend</button></form>`
  : ""}
</article>`;
}

export function endpointPage(viewer: Viewer, view: EndpointView): SafeHtml {
  const { endpoint } = view;
  const anyFailed = view.deliveries.some((d) => d.state === "failed");
  return page(
    viewer,
    "webhooks",
    `Endpoint ${endpoint.url}`,
    html`${view.rolled ? shownOnce({ id: "new-secret", title: "The new signing secret", value: view.rolled.secret, copyLabel: "Copy secret" }) : ""}
${view.rolled ? html`<p class="hint">The old secret signs deliveries beside the new one until ${stamp(view.rolled.previousSecretExpiresAt)}.</p>` : ""}
${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ""}
${endpoint.enabled
  ? ""
  : html`<section class="card warning" aria-labelledby="disabled-title"><h2 id="disabled-title">Disabled: no events are sent here</h2>
<p>${anyFailed ? "Deliveries to it failed for the whole retry window (3 days), which turns an endpoint off; or it was turned off by hand." : "It was turned off by hand, or its deliveries failed for the whole retry window (3 days)."} Enabling it again resumes the deliveries waiting.</p>
<form method="post" action="${BASE}/webhooks/${endpoint.id}/enable">${csrfField(viewer.csrfToken)}<button type="submit">Enable endpoint</button></form></section>`}
<section class="card" aria-labelledby="settings-title">
<h2 id="settings-title">Settings</h2>
<dl class="facts">
<dt>State</dt><dd>${stateBadge(endpoint)}</dd>
<dt>Event types</dt><dd>${eventsText(endpoint.events)}</dd>
${endpoint.description ? html`<dt>Description</dt><dd>${endpoint.description}</dd>` : ""}
<dt>Created</dt><dd>${stamp(endpoint.createdAt)}</dd>
<dt>Signing secret</dt><dd>Shown only when made; roll it to get a new one.</dd>
</dl>
<div class="actions">
${endpoint.enabled
  ? html`<form method="post" action="${BASE}/webhooks/${endpoint.id}/disable">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary">Disable endpoint</button></form>`
  : ""}
<form method="post" action="${BASE}/webhooks/${endpoint.id}/roll-secret" data-confirm="Make a new signing secret? The old one keeps signing beside it for 24 hours.">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary">Roll secret</button></form>
<form method="post" action="${BASE}/webhooks/${endpoint.id}/delete" data-confirm="Delete the endpoint ${endpoint.url}? Nothing more is sent to it.">${csrfField(viewer.csrfToken)}<button type="submit" class="danger">Delete endpoint</button></form>
</div>
</section>
<section aria-labelledby="deliveries-title">
<h2 id="deliveries-title">Recent deliveries</h2>
<p class="hint">Newest first${view.hasMore ? ", the latest 20" : ""}. ${endpoint.enabled ? "Resending sends the event again to every enabled endpoint it goes to." : "Enable the endpoint to resend an event to it."}</p>
${view.deliveries.length === 0 ? html`<p>No deliveries yet.</p>` : view.deliveries.map((d) => deliveryBlock(viewer, endpoint, d))}
</section>
<p><a href="${BASE}/webhooks">Back to the endpoints</a></p>`,
  );
}

import type { CalendarConnection } from "@sched/proto";
import type { Notice } from "../../../domain/consentNotice.js";
import { providerLabel, type ProviderCalendar } from "../../../outbound/calendars.js";
import { html, type SafeHtml } from "../html.js";
import { BASE, csrfField, page, stamp, type Viewer } from "./layout.js";

export interface ConnectionsView {
  connections: CalendarConnection[];
  /** The providers connected by consent, in the order their buttons appear. */
  oauthProviders: ReadonlyArray<{ provider: string; label: string }>;
  /** What the page says on arrival; one that went wrong reads as an error, but is still a status, not an alert. */
  notice?: Notice;
  /** Why connecting was refused, shown beside the form that was used. */
  error?: { form: "oauth" | "caldav"; message: string };
  /** What the CalDAV form held when it was refused; never the password. */
  caldav?: { serverUrl: string; username: string };
}

const accountOf = (c: CalendarConnection) => c.accountEmail ?? c.serverUrl ?? "—";

function stateOf(c: CalendarConnection): SafeHtml {
  return c.status === "active" ? html`<span class="badge on">Active</span>` : html`<span class="badge off">Needs reconnecting</span>`;
}

export function connectionsPage(viewer: Viewer, view: ConnectionsView): SafeHtml {
  const caldav = view.caldav ?? { serverUrl: "", username: "" };
  const caldavError = view.error?.form === "caldav" ? view.error.message : undefined;
  const invalid = caldavError ? html` aria-invalid="true"` : "";
  const describedBy = (hint: string) => (caldavError ? `${hint} caldav-error` : hint);
  return page(
    viewer,
    "calendars",
    "Calendar connections",
    html`<p class="hint">Connections belong to your account and serve live data: busy time from the calendars you choose, and invites through the default one. Test keys never reach a provider.</p>
${view.notice ? html`<p class="${view.notice.failed ? "error" : "notice"}" role="status">${view.notice.text}</p>` : ""}
<section aria-labelledby="list-title">
<h2 id="list-title">Your connections</h2>
${view.connections.length === 0
  ? html`<p>No calendar connected: invites go by e-mail.</p>`
  : html`<table>
<thead><tr><th scope="col">Provider</th><th scope="col">Account</th><th scope="col">State</th><th scope="col">Default</th><th scope="col">Connected</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>
${view.connections.map((c) => {
  const name = `${providerLabel(c.provider)} ${accountOf(c)}`;
  return html`<tr>
<td>${providerLabel(c.provider)}</td><td class="mono">${accountOf(c)}</td><td>${stateOf(c)}</td>
<td>${c.default
    ? html`<span class="badge on">Default</span>`
    : html`<form method="post" action="${BASE}/calendars/${c.id}/default">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary" aria-label="Make default: ${name}">Make default</button></form>`}</td>
<td>${stamp(c.createdAt)}</td>
<td><div class="actions"><a href="${BASE}/calendars/${c.id}" aria-label="Busy calendars of ${name}">Busy calendars</a>
<form method="post" action="${BASE}/calendars/${c.id}/disconnect" data-confirm="Disconnect ${name}?">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Disconnect ${name}">Disconnect</button></form></div></td>
</tr>`;
})}
</tbody></table>
${view.connections.some((c) => c.status !== "active") ? html`<p class="hint">A connection that needs reconnecting lost its grant (revoked or expired): connect the same account again below; until then invites go by e-mail.</p>` : ""}`}
</section>
<section class="card" aria-labelledby="oauth-title">
<h2 id="oauth-title">Connect a calendar</h2>
<p class="hint">You grant access at the provider; it then sends you back here, and the grant is kept encrypted.</p>
${view.error?.form === "oauth" ? html`<p class="error" role="alert">${view.error.message}</p>` : ""}
<div class="actions">
${view.oauthProviders.map((p) => html`<form method="post" action="${BASE}/calendars/connect/${p.provider}">${csrfField(viewer.csrfToken)}<button type="submit">Connect ${p.label}</button></form>`)}
</div>
</section>
<section class="card" aria-labelledby="caldav-title">
<h2 id="caldav-title">Connect a CalDAV calendar</h2>
<form method="post" action="${BASE}/calendars/caldav">
  ${csrfField(viewer.csrfToken)}
  ${caldavError ? html`<p class="error" role="alert" id="caldav-error">${caldavError}</p>` : ""}
  <label for="caldav-server">Server URL</label>
  <input id="caldav-server" name="serverUrl" type="url" required maxlength="2000" value="${caldav.serverUrl}" placeholder="https://caldav.fastmail.com/" aria-describedby="${describedBy("caldav-server-hint")}"${invalid}>
  <p id="caldav-server-hint" class="hint">iCloud, Fastmail, Nextcloud or any CalDAV server.</p>
  <label for="caldav-username">User name</label>
  <input id="caldav-username" name="username" type="text" required maxlength="320" autocomplete="username" value="${caldav.username}">
  <label for="caldav-password">App password</label>
  <input id="caldav-password" name="password" type="password" required maxlength="1024" autocomplete="current-password" aria-describedby="${describedBy("caldav-password-hint")}"${invalid}>
  <p id="caldav-password-hint" class="hint">An app password made for this; it is checked with the server, stored encrypted and never shown again.</p>
  <button type="submit">Connect CalDAV calendar</button>
</form>
</section>`,
  );
}

export function busyCalendarsPage(viewer: Viewer, view: { connection: CalendarConnection; calendars: ProviderCalendar[]; saved?: boolean }): SafeHtml {
  const { connection } = view;
  return page(
    viewer,
    "calendars",
    `Busy calendars of ${providerLabel(connection.provider)} ${accountOf(connection)}`,
    html`${view.saved ? html`<p class="notice" role="status">Saved.</p>` : ""}
<section class="card">
<dl class="facts"><dt>Account</dt><dd class="mono">${accountOf(connection)}</dd><dt>State</dt><dd>${stateOf(connection)}</dd></dl>
<form method="post" action="${BASE}/calendars/${connection.id}">
  ${csrfField(viewer.csrfToken)}
  <fieldset><legend>Calendars whose events count as busy time</legend>
  ${view.calendars.length === 0
    ? html`<p>This account has no calendar that holds events.</p>`
    : view.calendars.map((c) => html`<label><input type="checkbox" name="busy" value="${c.id}"${c.busy ? html` checked` : ""}> ${c.name}</label>`)}
  </fieldset>
  <button type="submit">Save busy calendars</button>
</form>
</section>
<p><a href="${BASE}/calendars">Back to the connections</a></p>`,
  );
}

/**
 * The way on to a provider's consent page. A form may not redirect to
 * another site (the policy's form-action is 'self'), so the answer is a
 * link, which the script follows at once.
 */
export function consentPage(viewer: Viewer, view: { label: string; authorizationUrl: string }): SafeHtml {
  return page(
    viewer,
    "calendars",
    `Connect ${view.label}`,
    html`<section class="card">
<p>Grant access at ${view.label}; it then sends you back to your calendars here, and the grant is kept encrypted. The link works for 10 minutes.</p>
<p><a class="button" href="${view.authorizationUrl}" data-follow>Continue to ${view.label}</a></p>
</section>
<p><a href="${BASE}/calendars">Back to the connections</a></p>`,
  );
}

import { SCOPES, type OwnApiKey } from "@sched/proto";
import { html, type SafeHtml } from "../html.js";
import { BASE, csrfField, page, shownOnce, type Viewer } from "./layout.js";

export interface KeysView {
  keys: OwnApiKey[];
  lastUse: Map<string, Date>;
  /** The key just made, shown this once. */
  created?: { name: string; key: string };
  error?: { field: string; message: string };
}

const when = (date: Date | string | undefined | null) => (date ? html`<time datetime="${new Date(date).toISOString()}">${new Date(date).toISOString().slice(0, 16).replace("T", " ")} UTC</time>` : "Not in the last 7 days");

export function keysPage(viewer: Viewer, view: KeysView): SafeHtml {
  const keys = view.keys.filter((k) => k.mode === viewer.mode);
  return page(
    viewer,
    "keys",
    "API keys",
    html`${view.created ? shownOnce({ id: "new-key", title: `Your new key “${view.created.name}”`, value: view.created.key, copyLabel: "Copy key" }) : ""}
<section class="card" aria-labelledby="create-title">
<h2 id="create-title">Create an API key</h2>
<form method="post" action="${BASE}/keys">
  ${csrfField(viewer.csrfToken)}
  ${view.error ? html`<p class="error" role="alert">${view.error.message}</p>` : ""}
  <label for="key-name">Name</label>
  <input id="key-name" name="name" type="text" maxlength="200" placeholder="API key" aria-describedby="key-name-hint">
  <p id="key-name-hint" class="hint">So you can tell your keys apart, for example “billing server”.</p>
  <fieldset><legend>Mode</legend>
    <label><input type="radio" name="mode" value="test"${viewer.mode === "test" ? html` checked` : ""}> Test</label>
    <label><input type="radio" name="mode" value="live"${viewer.mode === "live" ? html` checked` : ""}> Live</label>
  </fieldset>
  <fieldset><legend>Scopes</legend>
    ${SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}" checked> <code>${s}</code></label>`)}
  </fieldset>
  <button type="submit">Create API key</button>
</form>
</section>
<section aria-labelledby="list-title">
<h2 id="list-title">Your ${viewer.mode} keys</h2>
${keys.length === 0
  ? html`<p>No ${viewer.mode} keys yet.</p>`
  : html`<table>
<caption class="hint">Keys are shown by their prefix and last four characters only.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>
${keys.map(
  (k) => html`<tr${k.revokedAt ? html` class="revoked"` : ""}>
<td>${k.name ?? "—"}</td><td>${k.mode}</td><td class="mono">${k.preview}</td><td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td>
<td>${when(k.createdAt)}</td><td>${when(view.lastUse.get(k.id))}</td>
<td>${k.revokedAt
    ? html`Revoked ${when(k.revokedAt)}`
    : html`<form method="post" action="${BASE}/keys/${k.id}/revoke" data-confirm="Revoke ${k.name ?? k.preview}? The API refuses it at once.">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Revoke ${k.name ?? k.preview}">Revoke</button></form>`}</td>
</tr>`,
)}
</tbody></table>`}
</section>`,
  );
}

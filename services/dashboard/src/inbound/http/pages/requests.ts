import { STATUS_FILTERS, type StatusFilter } from "../../../domain/requestLog.js";
import type { DailyUsage, LoggedRequest } from "../../../db/queries.js";
import { html, type SafeHtml } from "../html.js";
import { BASE, page, stamp, type Viewer } from "./layout.js";

const FILTER_LABELS: Record<StatusFilter, string> = { all: "All", "2xx": "Succeeded (2xx)", "4xx": "Client errors (4xx)", "429": "Rate limited (429)", "5xx": "Server errors (5xx)" };

function requestTable(requests: LoggedRequest[], keyNames: Map<string, string>): SafeHtml {
  if (requests.length === 0) return html`<p>No requests to show.</p>`;
  return html`<table>
<thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Status</th><th scope="col" class="num">Duration</th><th scope="col">Request id</th></tr></thead>
<tbody>
${requests.map(
  (r) => html`<tr id="req-${r.requestId}">
<td>${stamp(r.at)}</td><td>${keyNames.get(r.apiKeyId) ?? r.apiKeyId}</td><td>${r.method}</td><td class="mono">${r.path}</td>
<td class="num">${r.status}</td><td class="num">${r.durationMs} ms</td>
<td class="mono"><a href="${BASE}/requests/${encodeURIComponent(r.requestId)}">${r.requestId}</a></td></tr>`,
)}
</tbody></table>`;
}

export function requestsPage(viewer: Viewer, view: { requests: LoggedRequest[]; filter: StatusFilter; keyNames: Map<string, string> }): SafeHtml {
  return page(
    viewer,
    "requests",
    "Request log",
    html`<p class="hint">Your ${viewer.mode} requests of the last 7 days, newest first (at most 200): what was asked and answered, never a body or a key.</p>
<form class="filters" method="get" action="${BASE}/requests">
  <div><label for="status">Status</label>
  <select id="status" name="status">${STATUS_FILTERS.map((f) => html`<option value="${f}"${f === view.filter ? html` selected` : ""}>${FILTER_LABELS[f]}</option>`)}</select></div>
  <button type="submit" class="secondary">Filter</button>
</form>
${requestTable(view.requests, view.keyNames)}`,
  );
}

export function requestPage(viewer: Viewer, request: LoggedRequest, keyNames: Map<string, string>): SafeHtml {
  return page(viewer, "requests", `Request ${request.requestId}`, html`${requestTable([request], keyNames)}<p><a href="${BASE}/requests#req-${request.requestId}">Back to the request log</a></p>`);
}

export function usagePage(viewer: Viewer, view: { usage: DailyUsage[]; keyNames: Map<string, string> }): SafeHtml {
  return page(
    viewer,
    "usage",
    "Usage",
    html`<p class="hint">Requests per ${viewer.mode} key and UTC day (midnight to midnight UTC), for the last 7 days; 429s count among the 4xx too.</p>
${view.usage.length === 0
  ? html`<p>No requests in the last 7 days.</p>`
  : html`<table>
<thead><tr><th scope="col">Day</th><th scope="col">Key</th><th scope="col" class="num">Requests</th><th scope="col" class="num">4xx</th><th scope="col" class="num">429</th><th scope="col" class="num">5xx</th></tr></thead>
<tbody>
${view.usage.map((u) => html`<tr><td>${u.day}</td><td>${view.keyNames.get(u.apiKeyId) ?? u.apiKeyId}</td><td class="num">${u.requests}</td><td class="num">${u.clientErrors}</td><td class="num">${u.rateLimited}</td><td class="num">${u.serverErrors}</td></tr>`)}
</tbody></table>`}`,
  );
}

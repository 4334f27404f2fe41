import type { Mode } from "@sched/proto";
import { ASSETS } from "../assets.js";
import { html, type SafeHtml } from "../html.js";

/** Where the dashboard lives on its origin, in every wiring. */
export const BASE = "/dashboard";

export type Section = "keys" | "usage" | "requests" | "webhooks" | "calendars" | "profile";

export const SECTIONS: ReadonlyArray<{ id: Section; label: string }> = [
  { id: "keys", label: "API keys" },
  { id: "usage", label: "Usage" },
  { id: "requests", label: "Request log" },
  { id: "webhooks", label: "Webhooks" },
  { id: "calendars", label: "Calendars" },
  { id: "profile", label: "Profile" },
];

/** What every signed-in page knows about the person looking at it. */
export interface Viewer {
  name: string;
  email: string;
  mode: Mode;
  csrfToken: string;
}

/** A value shown this once (a key, a signing secret), with a button that copies it. */
export function shownOnce(options: { id: string; title: string; value: string; copyLabel: string }): SafeHtml {
  return html`<section class="card notice" aria-labelledby="${options.id}-title">
<h2 id="${options.id}-title">${options.title}</h2>
<p>Copy it now: it is shown only this once, and never again anywhere.</p>
<div class="new-key"><code id="${options.id}">${options.value}</code>
<button type="button" class="secondary" data-copy-from="${options.id}" aria-describedby="${options.id}-status" hidden>${options.copyLabel}</button></div>
<p id="${options.id}-status" role="status" class="hint"></p>
</section>`;
}

/** A UTC instant as the pages write it, machine-readable beside. */
export function stamp(date: Date | string): SafeHtml {
  const d = new Date(date);
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 19).replace("T", " ")} UTC</time>`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function documentOf(title: string, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Scheduling API dashboard</title>
<link rel="stylesheet" href="${BASE}${ASSETS.style.path}">
<script src="${BASE}${ASSETS.script.path}" defer></script>
</head>
<body>
${body}
</body>
</html>`;
}

/** A page of a signed-in user: navigation, the test/live switch, sign-out. */
export function page(viewer: Viewer, section: Section, title: string, content: SafeHtml): SafeHtml {
  const other: Mode = viewer.mode === "test" ? "live" : "test";
  return documentOf(
    title,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Scheduling API</span>
  <nav aria-label="Dashboard">
    <ul>${SECTIONS.map((s) => html`<li><a href="${BASE}/${s.id}"${s.id === section ? html` aria-current="page"` : ""}>${s.label}</a></li>`)}</ul>
  </nav>
  <div>
    <form class="inline" method="post" action="${BASE}/mode">
      ${csrfField(viewer.csrfToken)}<input type="hidden" name="mode" value="${other}"><input type="hidden" name="back" value="${section}">
      <button type="submit" class="secondary">Viewing ${viewer.mode} data · switch to ${other}</button>
    </form>
    <form class="inline" method="post" action="${BASE}/sign-out">
      ${csrfField(viewer.csrfToken)}<button type="submit" class="secondary">Sign out ${viewer.email}</button>
    </form>
  </div>
</header>
${viewer.mode === "test" ? html`<p class="banner-test" role="status">Test data: test keys, meetings and contacts; invites are simulated, never sent.</p>` : ""}
<main id="main">
<h1>${title}</h1>
${content}
</main>`,
  );
}

/** A page for someone not signed in (the sign-in pages, and what refuses a request). */
export function plainPage(title: string, content: SafeHtml): SafeHtml {
  return documentOf(title, html`<main id="main"><h1>${title}</h1>${content}</main>`);
}

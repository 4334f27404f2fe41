import { createHash } from "node:crypto";

/**
 * The pages' only script: progressive, the pages work without it. The copy
 * button puts a new key or secret on the clipboard, what removes something
 * asks first, and the way on to a provider's consent is followed at once.
 */
const SCRIPT = `"use strict";
document.querySelectorAll("[data-copy-from]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var source = document.getElementById(button.getAttribute("data-copy-from"));
    var status = document.getElementById(button.getAttribute("aria-describedby"));
    navigator.clipboard.writeText(source.textContent.trim()).then(
      function () { status.textContent = "Copied to the clipboard."; },
      function () { status.textContent = "Copying failed: select it and copy it yourself."; }
    );
  });
});
var follow = document.querySelector("a[data-follow]");
if (follow) window.location.assign(follow.href);
document.querySelectorAll("form[data-confirm]").forEach(function (form) {
  form.addEventListener("submit", function (event) {
    if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
  });
});
`;

const STYLE = `:root { color-scheme: light; --ink: #1a1f36; --muted: #4f566b; --line: #d8dde6; --accent: #3b3fb6; --test: #8a4b00; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
.skip { position: absolute; left: -9999px; } .skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; }
header.top { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; justify-content: space-between; padding: .75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; }
nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
.banner-test { background: #fff4e0; color: var(--test); padding: .35rem 1.5rem; border-bottom: 1px solid #f0d9b0; font-size: 14px; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; } h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
section.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1.25rem; margin-bottom: 1.5rem; }
section.card > :first-child, section.card > form > :first-child { margin-top: 0; }
td.mono { white-space: nowrap; }
table { width: 100%; border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; padding: .5rem 1rem; }
fieldset label { display: inline-flex; gap: .35rem; font-weight: 400; margin: .25rem 1rem .25rem 0; }
input[type=text], input[type=email], input[type=number], select, textarea { font: inherit; padding: .45rem .6rem; border: 1px solid #8792a2; border-radius: 6px; width: 100%; max-width: 28rem; }
textarea { min-height: 8rem; font-family: ui-monospace, Menlo, monospace; }
button { font: inherit; padding: .45rem 1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
a.button { display: inline-block; padding: .45rem 1rem; border-radius: 6px; background: var(--accent); color: #fff; text-decoration: none; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: #a4161a; border-color: #a4161a; }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.hint { color: var(--muted); font-size: 14px; margin: .25rem 0; }
.error { color: #a4161a; font-weight: 600; }
.notice { background: #e8f5e9; border: 1px solid #a5d6a7; padding: .75rem 1rem; border-radius: 6px; }
.new-key { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; }
.new-key code { font-size: 15px; background: #f0f2f7; padding: .4rem .6rem; border-radius: 4px; word-break: break-all; }
.inline { display: inline; }
.filters { display: flex; gap: .75rem; align-items: end; margin: 1rem 0; }
.filters label { margin: 0; }
.revoked { color: var(--muted); }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: 999px; font-size: 13px; font-weight: 600; border: 1px solid; }
.badge.on { color: #1b5e20; border-color: #81c784; background: #f1f8f1; }
.badge.off { color: #a4161a; border-color: #e5a0a2; background: #fdf0f0; }
.badge.plain { color: var(--muted); border-color: var(--line); background: #fff; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.actions form { margin: 0; }
.warning { background: #fdf0f0; border: 1px solid #e5a0a2; color: #7a1014; padding: .75rem 1rem; border-radius: 6px; }
input[type=url], input[type=password] { font: inherit; padding: .45rem .6rem; border: 1px solid #8792a2; border-radius: 6px; width: 100%; max-width: 28rem; }
.delivery { border-top: 1px solid var(--line); padding: .75rem 0 1rem; }
.delivery h3 { font-size: 1rem; margin: 0 0 .5rem; }
.delivery form { margin-top: .5rem; }
section > table { margin-bottom: 1.5rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1.5rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); font-weight: 600; }
dl.facts dd { margin: 0; }
.warning h2 { margin-top: 0; }
`;

export interface Asset {
  /** `/assets/app.<hash>.js`: the hash changes with the content, so the file can be cached for a year. */
  path: string;
  type: string;
  body: string;
}

function hashed(name: string, ext: string, type: string, body: string): Asset {
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { path: `/assets/${name}.${hash}.${ext}`, type, body };
}

export const ASSETS = { script: hashed("app", "js", "text/javascript; charset=utf-8", SCRIPT), style: hashed("app", "css", "text/css; charset=utf-8", STYLE) };

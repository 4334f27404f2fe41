import { WEEKDAYS, type UserProfile } from "@sched/proto";
import { formatWorkingHours } from "../../../domain/forms.js";
import { html, type SafeHtml } from "../html.js";
import { BASE, csrfField, page, type Viewer } from "./layout.js";

export function profilePage(viewer: Viewer, view: { profile: UserProfile; saved?: boolean; error?: string; zones: readonly string[] }): SafeHtml {
  const { profile } = view;
  const prefs = profile.preferences;
  return page(
    viewer,
    "profile",
    "Profile",
    html`<section class="card">
${view.saved ? html`<p class="notice" role="status">Saved.</p>` : ""}
${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ""}
<form method="post" action="${BASE}/profile">
  ${csrfField(viewer.csrfToken)}
  <label for="name">Name</label>
  <input id="name" name="name" type="text" maxlength="200" required value="${profile.name}">
  <label for="timezone">Time zone</label>
  <input id="timezone" name="timezone" type="text" list="zones" required value="${profile.timezone}" aria-describedby="timezone-hint">
  <datalist id="zones">${view.zones.map((z) => html`<option value="${z}">`)}</datalist>
  <p id="timezone-hint" class="hint">An IANA zone such as Europe/Berlin; times without an offset are read in it.</p>
  <label for="workingHours">Working hours</label>
  <textarea id="workingHours" name="workingHours" aria-describedby="hours-hint">${formatWorkingHours(profile.workingHours)}</textarea>
  <p id="hours-hint" class="hint">One window a line, like “monday 09:00-17:00”; several a day are allowed.</p>
  <h2>Preferences</h2>
  <label for="bufferMinutes">Minutes free between meetings</label>
  <input id="bufferMinutes" name="bufferMinutes" type="number" min="0" max="240" value="${prefs.bufferMinutes ?? ""}">
  <label for="maxMeetingsPerDay">Most meetings a day</label>
  <input id="maxMeetingsPerDay" name="maxMeetingsPerDay" type="number" min="1" max="50" value="${prefs.maxMeetingsPerDay ?? ""}">
  <fieldset><legend>Days kept free of meetings</legend>
  ${WEEKDAYS.map((d) => html`<label><input type="checkbox" name="avoidDays" value="${d}"${prefs.avoidDays.includes(d) ? html` checked` : ""}> ${d[0]!.toUpperCase() + d.slice(1)}</label>`)}
  </fieldset>
  <button type="submit">Save profile</button>
</form>
</section>`,
  );
}

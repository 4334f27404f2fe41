import { html, type SafeHtml } from "../html.js";
import { BASE, plainPage } from "./layout.js";

/** Asks for an e-mail address to send a sign-in link to. */
export function signInPage(options: { csrfToken: string; signUp: boolean; message?: string }): SafeHtml {
  return plainPage(
    "Sign in",
    html`<section class="card">
${options.message ? html`<p class="notice" role="status">${options.message}</p>` : ""}
<form method="post" action="${BASE}/sign-in/email">
  <input type="hidden" name="_csrf" value="${options.csrfToken}">
  <label for="email">E-mail address</label>
  <input id="email" name="email" type="email" autocomplete="email" required>
  <p class="hint">${options.signUp ? "We e-mail you a link that signs you in, and makes your account if you have none yet." : "We e-mail you a link that signs you in."} It works once, within 15 minutes.</p>
  <button type="submit">E-mail me a sign-in link</button>
</form>
</section>`,
  );
}

/** What opening a link shows: one button, so that a mail scanner fetching the link does not use it up. */
export function confirmSignInPage(options: { csrfToken: string; token: string; email: string }): SafeHtml {
  return plainPage(
    "Sign in",
    html`<section class="card">
<form method="post" action="${BASE}/sign-in/link">
  <input type="hidden" name="_csrf" value="${options.csrfToken}">
  <input type="hidden" name="token" value="${options.token}">
  <p>You are signing in as <strong>${options.email}</strong>.</p>
  <button type="submit">Sign in</button>
</form>
</section>`,
  );
}

export function linkRefusedPage(): SafeHtml {
  return plainPage(
    "This sign-in link does not work",
    html`<section class="card"><p class="error" role="alert">The link was used already, has expired, or was never made. Links work once, within 15 minutes.</p>
<p><a href="${BASE}/sign-in">Ask for a new link</a></p></section>`,
  );
}

export function refusedPage(title: string, message: string): SafeHtml {
  return plainPage(title, html`<section class="card"><p class="error" role="alert">${message}</p><p><a href="${BASE}/keys">Back to the dashboard</a></p></section>`);
}

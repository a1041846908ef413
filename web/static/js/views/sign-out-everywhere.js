// The view /sign-out-everywhere: the link of a security e-mail ("if this
// was not you, sign out everywhere"), <wallet>/sign-out-everywhere#<token>.
//
// It is a public view (views.js): the person who opens it may be signed in
// nowhere, on a phone that never saw the wallet. The token is the proof
// (single use, 7 days), and it travels in the fragment so that it reaches
// no server log; nothing happens when the page loads (a mail scanner that
// opens links must not sign anybody out): the person presses the button,
// and the page sends POST /api/sign-out-everywhere {token}. The service
// signs out every session of the wallet, this browser's too; the page then
// says how many and what to do next.

import { api, ApiError, messageOf, signalSignedOut } from "../api.js";
import { formatWait } from "../format.js";
import { t } from "../i18n.js";

const $ = (id) => document.getElementById(id);

// The link's token: base64url, as the service makes it (32 bytes → 43
// characters); anything else is no token.
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

const ctx = { token: "", sending: false, done: false };

/** Leaving the view (or signing out) forgets an unused token. */
export function hide() {
  ctx.token = "";
  ctx.done = false;
}

export const signOut = hide;

/** Wires the view once. */
export function init() {
  $("soe-submit").addEventListener("click", onSubmit);
}

/**
 * Shown: reads the token from the address's fragment (and keeps it here
 * only, until it is used), and asks the person.
 */
export function show() {
  const hash = location.hash.startsWith("#") ? location.hash.slice(1) : "";
  if (TOKEN.test(hash)) {
    ctx.token = hash;
    ctx.done = false;
    // The token leaves the address at once: not kept in the history (or
    // a synced history elsewhere) whatever happens next.
    history.replaceState(history.state, "", location.pathname);
  }
  if (ctx.done) return; // the answer stays on screen
  $("soe-error").hidden = true;
  $("soe-done").hidden = true;
  $("soe-ask").hidden = ctx.token === "";
  $("soe-missing").hidden = ctx.token !== "";
}

async function onSubmit() {
  if (ctx.sending || ctx.token === "") return;
  ctx.sending = true;
  const button = $("soe-submit");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  $("soe-error").hidden = true;
  try {
    const { data } = await api("POST", "/api/sign-out-everywhere", { body: { token: ctx.token } });
    const n = data && Number.isInteger(data.revokedSessions) ? data.revokedSessions : 0;
    ctx.token = "";
    ctx.done = true;
    $("soe-done").hidden = false;
    $("soe-result").textContent = n > 0 ? t("signOutEverywhere.done", { count: n }) : t("signOutEverywhere.doneNone");
    $("soe-ask").hidden = true;
    $("soe-title").focus(); // the pressed button is gone with its part
    // This browser's session ended with the others: a wallet open here
    // signs out (the page stays on this answer).
    signalSignedOut();
  } catch (err) {
    const errorEl = $("soe-error");
    if (err instanceof ApiError && err.status === 400) {
      // An unknown, used or expired token: the service names "token".
      ctx.token = "";
      $("soe-ask").hidden = true;
      errorEl.textContent = t("signOutEverywhere.error.used");
    } else if (err instanceof ApiError && err.status === 429) {
      errorEl.textContent = t("signOutEverywhere.error.tooMany", { wait: formatWait(err.retryAfter || 60) });
    } else {
      errorEl.textContent = t("signOutEverywhere.error.failed", { reason: messageOf(err) });
    }
    errorEl.hidden = false;
    if ($("soe-ask").hidden) $("soe-title").focus();
  } finally {
    ctx.sending = false;
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

// The Security view (/security): who is signed in and the wallet account,
// the session (its end and key, drawn by the session module), the sessions
// (security/sessions.js), the sign-in methods and the recovery phrase
// (security/credentials.js), the limits of payments (security/limits.js)
// and the security log (security/log.js): parts with their own markup,
// kept in modules of their own beside this one.

import { humanize, t } from "../i18n.js";
import { hideCredentials, initCredentials, showCredentials } from "./security/credentials.js";
import { hideSessions, initSessions, showSessions } from "./security/sessions.js";
import { hideLimits, initLimits, showLimits } from "./security/limits.js";
import { hideLog, initLog, showLog } from "./security/log.js";

const $ = (id) => document.getElementById(id);

let setStatus = () => {};

/** Wires the view once. */
export function init(shell) {
  setStatus = shell.setStatus;
  initSessions(shell);
  initCredentials(shell);
  initLimits(shell);
  initLog();
  $("copy-key").addEventListener("click", onCopyKey);
}

/**
 * Signed in: the facts of me (GET /api/me), its sessions and, unless this
 * is a quiet refresh of a view that shows them already, its sign-in methods.
 */
export function signIn(me, { quiet = false } = {}) {
  $("me-email").textContent = me.email || "";
  const acct = me.internalAccount || {};
  $("account-id").textContent = acct.id || "";
  $("wallet-type").textContent = valueText(acct.type);
  $("account-status").textContent = valueText(acct.status);
  showSessions((me.session || {}).id);
  if (!quiet || $("credentials").hidden) showCredentials(acct.id);
  if (!quiet || $("limits").hidden) showLimits(acct.id);
  if (!quiet || $("security-log").hidden) showLog();
}

/**
 * Shown: the log again (what this visit did is in it), and at the limits
 * when the address asks for them (Send's link, "/security#limits").
 */
export function show() {
  if (!$("security-log").hidden) showLog();
  if (location.hash === "#limits") {
    requestAnimationFrame(() => {
      $("limits").scrollIntoView({ block: "start" });
      $("limits-title").focus({ preventScroll: true });
    });
  }
}

/** Signed out: forgets the sessions and the sign-in methods. */
export function signOut() {
  hideSessions();
  hideCredentials();
  hideLimits();
  hideLog();
}

async function onCopyKey() {
  const value = $("session-public-key").dataset.value;
  if (!value) return;
  try {
    await navigator.clipboard.writeText(value);
    setStatus(t("security.facts.copied"));
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("session-public-key"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    setStatus(t("security.facts.copyBlocked"));
  }
}

// valueText is a value of the service (an account's type or status, such
// as "EMBEDDED_WALLET") in words: the catalogue's ("security.value.<value
// in lowerCamel>"), else the value itself made readable.
function valueText(value) {
  if (typeof value !== "string" || value === "") return "";
  const key = "security.value." + value.toLowerCase().replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  const text = t(key);
  return text === key ? humanize(value) : text;
}

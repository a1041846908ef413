// The "Sessions" part of the Security view (views/security.js).
//
// The panel lists the wallet's active sessions (GET /api/auth/sessions),
// each named by the device it was signed in from when the BFF knows it
// (its "device" member, from the browser's User-Agent at sign-in): this
// tab's own is marked, every other one (another device, another
// browser) has a "Sign out" button that revokes it with a signed
// DELETE /api/auth/sessions/{id} (session.js signedRetry). Without the
// session's key in this tab (the wallet module did not start) nothing can
// be signed, and the buttons say so.

import { api, ApiError, messageOf } from "../../api.js";
import { getLocale, t } from "../../i18n.js";
import { signedRetry } from "../../session.js";

const $ = (id) => document.getElementById(id);

const ctx = {
  key: null, // () => {handle, publicKey, sessionId} | null
  keyPending: () => false, // the key is being resumed (the view was drawn first)
  setStatus: null,
  currentId: "", // the cookie's wallet session
  loading: 0, // generation of the list being loaded
};

// The kind of sign-in of a session: as a label, and inside a sentence
// (lower case in English, as German nouns are not).
const TYPE_TEXT = {
  EMAIL_OTP: () => t("security.sessions.kind.emailOtp"),
  PASSKEY: () => t("security.sessions.kind.passkey"),
  OAUTH: () => t("security.sessions.kind.oauth"),
};
const TYPE_INLINE = {
  EMAIL_OTP: () => t("security.sessions.kindInline.emailOtp"),
  PASSKEY: () => t("security.sessions.kindInline.passkey"),
  OAUTH: () => t("security.sessions.kindInline.oauth"),
};

/**
 * Wires the panel once.
 *
 * key is this tab's session key, or null; while keyPending() it is being
 * resumed (signedRetry waits for it).
 *
 * @param {{key: () => object|null, keyPending: () => boolean, setStatus: (text: string) => void}} options
 */
export function initSessions({ key, keyPending, setStatus }) {
  ctx.key = key;
  ctx.keyPending = keyPending;
  ctx.setStatus = setStatus;
  $("sessions-list").addEventListener("click", onListClick);
  $("sessions-refresh").addEventListener("click", () => loadSessions());
}

/** Shows the panel for the signed-in wallet session currentId and (re)loads it. */
export function showSessions(currentId) {
  ctx.currentId = typeof currentId === "string" ? currentId : "";
  $("sessions").hidden = false;
  loadSessions();
}

/** Hides the panel and forgets what it showed. */
export function hideSessions() {
  ctx.loading++;
  ctx.currentId = "";
  $("sessions").hidden = true;
  $("sessions-list").replaceChildren();
  $("sessions-error").hidden = true;
}

async function loadSessions() {
  const generation = ++ctx.loading;
  const errorEl = $("sessions-error");
  errorEl.hidden = true;
  try {
    const { data } = await api("GET", "/api/auth/sessions");
    if (generation !== ctx.loading) return;
    const list = data && Array.isArray(data.data) ? data.data : [];
    // This device first, then the newest.
    list.sort((a, b) => (a.id === ctx.currentId ? -1 : b.id === ctx.currentId ? 1 : String(b.createdAt).localeCompare(String(a.createdAt))));
    $("sessions-list").replaceChildren(...list.map(sessionItem));
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    errorEl.textContent = t("security.sessions.error.load", { reason: messageOf(err) });
    errorEl.hidden = false;
  }
}

function sessionItem(s) {
  const li = document.createElement("li");
  li.className = "session";
  li.dataset.id = String(s.id || "");
  const current = s.id === ctx.currentId;

  // The device the BFF saw at sign-in ("Chrome on macOS") is what a person
  // recognises, so it is the main line; the kind of sign-in and the times
  // follow. Sessions the BFF did not sign in (the CLI, say) have no device
  // and read as before: the kind of sign-in, then the times.
  const device = deviceLabel(s);
  const kindText = Object.hasOwn(TYPE_TEXT, s.type) ? TYPE_TEXT[s.type]() : t("security.sessions.kind.other");
  const kindInline = Object.hasOwn(TYPE_INLINE, s.type) ? TYPE_INLINE[s.type]() : t("security.sessions.kindInline.other");
  const main = document.createElement("div");
  main.className = "session-main";
  const kind = document.createElement("span");
  kind.className = "session-kind";
  kind.textContent = device || kindText;
  const when = document.createElement("span");
  when.className = "session-when";
  const times = describeTimes(s);
  when.textContent = device && times ? t("security.sessions.kindAndTimes", { kind: kindText, times }) : device ? kindText : times;
  if (device) {
    kind.classList.add("session-device");
    main.append(kind, document.createElement("br"), when);
  } else {
    main.append(kind, " ", when);
  }
  li.append(main);

  if (current) {
    const badge = document.createElement("span");
    badge.className = "badge badge-active";
    badge.textContent = t("security.sessions.thisDevice");
    li.append(badge);
  } else {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "small secondary";
    button.dataset.revoke = li.dataset.id;
    button.textContent = t("security.sessions.revoke");
    if (!ctx.key() && !ctx.keyPending()) {
      button.disabled = true;
      button.title = t("security.sessions.needsReload");
    }
    button.setAttribute(
      "aria-label",
      device
        ? t("security.sessions.revokeDevice", { device, when: when.textContent })
        : t("security.sessions.revokeKind", { kind: kindInline, when: when.textContent }),
    );
    li.append(button);
  }
  return li;
}

/** The session's device label as the BFF named it, or "" when it has none. */
function deviceLabel(s) {
  const label = s && s.device && typeof s.device.label === "string" ? s.device.label.trim() : "";
  return label.slice(0, 80);
}

function describeTimes(s) {
  const started = Date.parse(s.createdAt);
  const ends = Date.parse(s.expiresAt);
  const start = Number.isFinite(started)
    ? new Date(started).toLocaleString(getLocale(), { dateStyle: "medium", timeStyle: "short" })
    : "";
  // The end alone as a time when it is the start's day (or today's), with
  // its date when it falls on another ("until 12:02 AM" past midnight
  // would read as the same night's start).
  const sameDay = (a, b) => new Date(a).toDateString() === new Date(b).toDateString();
  const endDated = Number.isFinite(ends) && !sameDay(ends, Number.isFinite(started) ? started : Date.now());
  const end = Number.isFinite(ends)
    ? new Date(ends).toLocaleString(getLocale(), endDated ? { dateStyle: "medium", timeStyle: "short" } : { timeStyle: "short" })
    : "";
  if (start && end) return t("security.sessions.times", { start, end });
  if (start) return t("security.sessions.started", { start });
  if (end) return t("security.sessions.until", { end });
  return "";
}

async function onListClick(event) {
  const button = event.target.closest("button[data-revoke]");
  if (!button || button.disabled) return;
  const id = button.dataset.revoke;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    // Ids go into the path as they are: the BFF takes only the exact
    // "Session:<uuid>" form, never a percent-encoded one.
    if (!/^Session:[0-9a-f-]{36}$/.test(id)) throw new Error("not a session id");
    await signedRetry("DELETE", "/api/auth/sessions/" + id);
    ctx.setStatus(t("security.sessions.revoked"));
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED")) {
      const errorEl = $("sessions-error");
      errorEl.textContent = t("security.sessions.error.revoke", { reason: messageOf(err) });
      errorEl.hidden = false;
    }
  } finally {
    button.removeAttribute("aria-busy");
    await loadSessions();
  }
}

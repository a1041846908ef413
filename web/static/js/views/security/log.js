// The "Activity" part of the Security view (views/security.js): the
// security log of the person (GET /api/security-events, newest first,
// paged with the service's cursor), each record as a plain sentence
// ("Signed in with a passkey on Chrome on Android") with its time and the
// network it came from, in words.
//
// "Download as JSON" saves every record, all pages, exactly as the service
// gave them (hash and previousHash included): the service chains each
// customer's records, so anyone can recompute the chain from the file and
// see that nothing was changed, left out or reordered. The file is made in
// the browser (a Blob and <a download>), like the statement's CSV.

import { api, ApiError, messageOf } from "../../api.js";
import { formatMoney } from "../../format.js";
import { getLocale, said, t } from "../../i18n.js";
import { hoursText, whenText } from "./limits.js";
import { saveFile } from "../../download.js";

const $ = (id) => document.getElementById(id);

// Records per "Show more", and per request of a download (the service's
// largest page).
const PAGE = 20;
const EXPORT_PAGE = 100;

const ctx = {
  records: [], // the service's records shown, newest first
  cursor: "", // nextCursor of the last page, "" when there is no more
  loading: 0, // generation of the list being loaded
  epoch: 0, // counts sign-outs: a download begun before saves nothing
  downloading: false,
};

/** Wires the panel once. */
export function initLog() {
  $("security-log-refresh").addEventListener("click", () => loadLog());
  $("security-log-more").addEventListener("click", () => loadLog({ more: true }));
  $("security-log-download").addEventListener("click", onDownload);
  // A change made on this page (limits.js) is a new record: show it.
  document.addEventListener("wallet:security-log", () => {
    if (!$("security-log").hidden) loadLog();
  });
}

/** Shows the panel and loads the newest records. */
export function showLog() {
  $("security-log").hidden = false;
  loadLog();
}

/** Hides the panel and forgets what it showed. */
export function hideLog() {
  ctx.loading++;
  ctx.epoch++;
  ctx.records = [];
  ctx.cursor = "";
  $("security-log").hidden = true;
  $("security-log-list").replaceChildren();
  $("security-log-error").hidden = true;
  $("security-log-empty").hidden = true;
  $("security-log-more").hidden = true;
  $("security-log-download-status").textContent = "";
}

async function loadLog({ more = false } = {}) {
  const generation = ++ctx.loading;
  const errorEl = $("security-log-error");
  errorEl.hidden = true;
  const button = $("security-log-more");
  if (more) button.setAttribute("aria-busy", "true");
  try {
    const page = await fetchPage(PAGE, more ? ctx.cursor : "");
    if (generation !== ctx.loading) return;
    ctx.records = more ? ctx.records.concat(page.items) : page.items;
    ctx.cursor = page.next;
    render();
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    errorEl.textContent = t("security.log.error.load", { reason: messageOf(err) });
    errorEl.hidden = false;
  } finally {
    button.removeAttribute("aria-busy");
  }
}

// fetchPage is one page of the log: its records and the cursor of the
// next ("" at the end).
async function fetchPage(limit, cursor) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set("cursor", cursor);
  const { data } = await api("GET", "/api/security-events?" + q.toString());
  const items = data && Array.isArray(data.data) ? data.data : [];
  const next = data && data.hasMore && typeof data.nextCursor === "string" ? data.nextCursor : "";
  return { items, next };
}

function render() {
  // Facts one record lends another: the device of a session (its
  // SIGNED_IN) for the record of its sign-out, the name of a passkey (its
  // SIGN_IN_METHOD_ADDED) for the record of its removal.
  const known = { sessions: new Map(), passkeys: new Map() };
  for (const r of ctx.records) {
    const d = details(r);
    if (r.type === "SIGNED_IN" && d.sessionId && d.device) known.sessions.set(d.sessionId, String(d.device));
    if (r.type === "SIGN_IN_METHOD_ADDED" && d.credentialId && d.nickname) known.passkeys.set(d.credentialId, String(d.nickname));
  }
  $("security-log-list").replaceChildren(...ctx.records.map((r) => item(r, known)));
  $("security-log-empty").hidden = ctx.records.length > 0;
  $("security-log-more").hidden = ctx.cursor === "";
}

function item(r, known) {
  const li = document.createElement("li");
  li.className = "security-event";
  li.dataset.type = String(r.type || "");
  li.dataset.id = String(r.id || "");
  const d = details(r);
  const what = document.createElement("span");
  what.className = "security-event-what";
  what.textContent = sentence(r.type, d, known);
  const meta = document.createElement("span");
  meta.className = "security-event-meta";
  const parts = [];
  const ms = Date.parse(r.createdAt);
  const time = document.createElement("time");
  if (Number.isFinite(ms)) {
    time.dateTime = new Date(ms).toISOString();
    time.textContent = new Date(ms).toLocaleString(getLocale(), { dateStyle: "medium", timeStyle: "short" });
  }
  // The device is in the sentence of a sign-in; of any other record it
  // says where it was done.
  if (r.type !== "SIGNED_IN" && typeof d.device === "string" && d.device.trim()) parts.push(t("security.log.onDevice", { device: d.device.trim().slice(0, 80) }));
  const where = networkText(d.network);
  if (where) parts.push(where);
  meta.append(time);
  if (parts.length) meta.append(" · " + parts.join(" · "));
  li.append(what, meta);
  return li;
}

function details(r) {
  return r && r.details && typeof r.details === "object" ? r.details : {};
}

// The ways of signing in, inside a sentence ("with a passkey").
const METHOD = {
  EMAIL_OTP: "security.log.method.emailOtp",
  PASSKEY: "security.log.method.passkey",
  OAUTH: "security.log.method.oauth",
};

// Why a sign-in failed (service/payments SignInFailure…).
const FAILURE = {
  WRONG_CODE: "security.log.failed.wrongCode",
  EXPIRED_CODE: "security.log.failed.expiredCode",
  USED_CODE: "security.log.failed.usedCode",
  NO_CODE: "security.log.failed.noCode",
  BAD_BUNDLE: "security.log.failed.badBundle",
  LOCKED: "security.log.failed.locked",
  PASSKEY_REFUSED: "security.log.failed.passkey",
};

// Who signed a session out.
const BY = {
  YOU: "security.log.by.you",
  PLATFORM: "security.log.by.platform",
  EMAIL_LINK: "security.log.by.emailLink",
};

// The actions a confirmation (step-up) was for, inside a sentence.
const ACTION = {
  PAYMENT: "security.log.action.payment",
  TRANSFER: "security.log.action.transfer",
  RECOVERY_PHRASE_EXPORT: "security.log.action.export",
  SIGN_IN_METHOD_ADD: "security.log.action.methodAdd",
  SIGN_IN_METHOD_REMOVE: "security.log.action.methodRemove",
  EMAIL_CHANGE: "security.log.action.emailChange",
  LIMITS_LOOSEN: "security.log.action.limitsLoosen",
};

const FACTOR = {
  PASSKEY: "security.log.factor.passkey",
  EMAIL_OTP: "security.log.factor.emailOtp",
};

/**
 * A record in a person's words. Exported for tests.
 *
 * @param {string} type the record's type (service/payments Security…)
 * @param {object} d its details
 * @param {{sessions: Map<string,string>, passkeys: Map<string,string>}} [known]
 * @returns {string}
 */
export function sentence(type, d, known = { sessions: new Map(), passkeys: new Map() }) {
  const device = typeof d.device === "string" ? d.device.trim().slice(0, 80) : "";
  switch (type) {
    case "SIGNED_IN": {
      const method = t(said(METHOD, d.method) || "security.log.method.other");
      return device ? t("security.log.signedIn.device", { method, device }) : t("security.log.signedIn", { method });
    }
    case "SIGN_IN_FAILED":
      return t(said(FAILURE, d.reason) || "security.log.failed.other");
    case "LOCKED_OUT": {
      const time = whenText(d.until);
      const count = Number.isInteger(d.failedAttempts) ? d.failedAttempts : 0;
      return d.action === "SIGN_IN"
        ? t("security.log.locked.signIn", { time, count })
        : t("security.log.locked.payments", { time, count });
    }
    case "SESSION_REVOKED": {
      const by = t(said(BY, d.by) || "security.log.by.other");
      const of = known.sessions.get(d.sessionId);
      return of ? t("security.log.revoked.device", { device: of, by }) : t("security.log.revoked", { by });
    }
    case "SIGN_IN_METHOD_ADDED":
      if (d.method === "PASSKEY") {
        return d.nickname ? t("security.log.added.passkeyNamed", { name: String(d.nickname) }) : t("security.log.added.passkey");
      }
      return t(d.method === "OAUTH" ? "security.log.added.oauth" : d.method === "EMAIL_OTP" ? "security.log.added.emailOtp" : "security.log.added.other");
    case "SIGN_IN_METHOD_REMOVED":
      if (d.method === "PASSKEY") {
        const name = known.passkeys.get(d.credentialId);
        return name ? t("security.log.removed.passkeyNamed", { name }) : t("security.log.removed.passkey");
      }
      return t(d.method === "OAUTH" ? "security.log.removed.oauth" : d.method === "EMAIL_OTP" ? "security.log.removed.emailOtp" : "security.log.removed.other");
    case "EMAIL_CHANGED":
      return d.from
        ? t("security.log.emailChanged.from", { from: String(d.from), to: String(d.to || "") })
        : t("security.log.emailChanged", { to: String(d.to || "") });
    case "RECOVERY_PHRASE_EXPORTED":
      return t("security.log.exported");
    case "STEP_UP_PASSED": {
      const action = t(said(ACTION, d.action) || "security.log.action.other");
      const factor = said(FACTOR, d.factor);
      return factor ? t("security.log.stepUp.passedWith", { action, factor: t(factor) }) : t("security.log.stepUp.passed", { action });
    }
    case "STEP_UP_FAILED":
      return t("security.log.stepUp.failed", { action: t(said(ACTION, d.action) || "security.log.action.other") });
    case "LIMITS_CHANGED":
      return limitsSentence(d);
  }
  return t("security.log.other", { type: String(type || "") });
}

// limitsSentence: "Changed your limits: per payment $100.00; daily $2,000.00
// from Dec 7, 10:15 AM."
function limitsSentence(d) {
  const before = d.before && typeof d.before === "object" ? d.before : {};
  const after = d.after && typeof d.after === "object" ? d.after : {};
  const cur = after.currency || before.currency || "";
  const money = (v) => (v === null || v === undefined ? t("security.limits.none") : formatMoney(v, cur) || String(v));
  const parts = [];
  const name = { perPayment: "security.log.limits.perPayment", daily: "security.log.limits.daily", newRecipientCoolingOffHours: "security.log.limits.coolingOff" };
  const value = (m, v) => (m === "newRecipientCoolingOffHours" ? hoursText(v) : money(v));
  for (const m of Object.keys(name)) {
    if ((before[m] ?? null) !== (after[m] ?? null)) parts.push(t(name[m], { value: value(m, after[m] ?? null) }));
  }
  const p = after.pending && typeof after.pending === "object" ? after.pending : null;
  if (p) {
    const time = whenText(p.effectiveAt || d.effectiveAt);
    for (const m of Object.keys(name)) {
      if (Object.hasOwn(p, m)) parts.push(t("security.log.limits.from", { what: t(name[m], { value: value(m, p[m]) }), time }));
    }
  }
  return parts.length ? t("security.log.limits.changed", { changes: parts.join("; ") }) : t("security.log.limits.changedPlain");
}

/**
 * The network of a record in words: "from 203.0.113.0/24", "from this
 * computer", "from a private network"; "" when unknown.
 */
export function networkText(network) {
  if (typeof network !== "string" || network === "") return "";
  if (network === "loopback") return t("security.log.network.loopback");
  if (network === "private") return t("security.log.network.private");
  return t("security.log.network.range", { network: network.slice(0, 64) });
}

// onDownload saves every record of the log, all pages, as the service gave
// them, in security-log-YYYY-MM-DD.json.
async function onDownload() {
  if (ctx.downloading) return;
  ctx.downloading = true;
  const epoch = ctx.epoch;
  const button = $("security-log-download");
  const status = $("security-log-download-status");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  status.textContent = t("security.log.download.working");
  try {
    const records = [];
    let cursor = "";
    do {
      const page = await fetchPage(EXPORT_PAGE, cursor);
      if (epoch !== ctx.epoch) return;
      records.push(...page.items);
      cursor = page.next;
    } while (cursor);
    const today = new Date();
    const pad = (n) => String(n).padStart(2, "0");
    const name = "security-log-" + today.getFullYear() + "-" + pad(today.getMonth() + 1) + "-" + pad(today.getDate()) + ".json";
    const file = {
      exportedAt: new Date().toISOString(),
      about: t("security.log.download.about"),
      records,
    };
    saveFile(JSON.stringify(file, null, 2) + "\n", name, "application/json;charset=utf-8");
    status.textContent = t("security.log.download.done", { name, count: records.length });
  } catch (err) {
    if (epoch !== ctx.epoch) return;
    status.textContent = "";
    const errorEl = $("security-log-error");
    errorEl.textContent = t("security.log.error.download", { reason: messageOf(err) });
    errorEl.hidden = false;
  } finally {
    ctx.downloading = false;
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

// The "Limits" part of the Security view (views/security.js): the limits
// the person sets for payments from their wallet (GET and PATCH
// /api/internal-accounts/{id}/limits), enforced by the service.
//
// The amounts are money in the wallet's currency, typed as Send's amount
// is (format.js parseMoney) and shown as the rest of the wallet shows
// money (formatMoney); an empty field is "no limit". The cooling-off for
// new recipients is a choice of hours. Save sends only what changed, as a
// signed retry (session.js signedRetry): a change that tightens applies at
// once; one that loosens waits 24 hours, and the service holds it for the
// person's confirmation first (the step-up dialog, which signedRetry runs).
// The page says which of the two happened, from the service's answer.

import { ApiError, api, messageOf } from "../../api.js";
import { decimalAmount, formatMoney, parseMoney } from "../../format.js";
import { getLocale, t } from "../../i18n.js";
import { signedRetry } from "../../session.js";
import { StepUpCancelled } from "../../stepup.js";

const $ = (id) => document.getElementById(id);

// The choices of a cooling-off, in hours (the service takes 0 to 720).
const COOLING_OFF = [0, 1, 4, 12, 24, 48, 72, 168, 336, 720];

// The amount fields: the member of WalletLimits, the input's id.
const AMOUNTS = [
  { member: "perPayment", input: "limits-per-payment" },
  { member: "daily", input: "limits-daily" },
];

const ctx = {
  accountId: "",
  limits: null, // the service's WalletLimits
  loading: 0, // generation of the limits being loaded
  saving: false,
  setStatus: () => {},
};

/** Wires the panel once. */
export function initLimits({ setStatus }) {
  ctx.setStatus = setStatus;
  $("limits-form").addEventListener("submit", onSave);
  $("limits-cancel-pending").addEventListener("click", onCancelPending);
}

/** Shows the panel for the wallet accountId and loads its limits. */
export function showLimits(accountId) {
  ctx.accountId = typeof accountId === "string" ? accountId : "";
  $("limits").hidden = ctx.accountId === "";
  if (ctx.accountId) loadLimits();
}

/** Hides the panel and forgets what it showed. */
export function hideLimits() {
  ctx.loading++;
  ctx.accountId = "";
  ctx.limits = null;
  $("limits").hidden = true;
  $("limits-current").replaceChildren();
  $("limits-pending-box").hidden = true;
  $("limits-result").hidden = true;
  clearErrors();
}

async function loadLimits({ keepResult = false } = {}) {
  const generation = ++ctx.loading;
  $("limits-error").hidden = true;
  try {
    // Ids go into the path as they are: the BFF takes only the exact form.
    if (!/^InternalAccount:[0-9a-f-]{36}$/.test(ctx.accountId)) throw new Error(t("security.limits.error.noWallet"));
    const { data } = await api("GET", "/api/internal-accounts/" + ctx.accountId + "/limits");
    if (generation !== ctx.loading) return;
    draw(data, { keepResult });
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    showError(t("security.limits.error.load", { reason: messageOf(err) }));
  }
}

// draw shows the limits the service answered: the current values, the
// change that waits, and the form filled with what applies now.
function draw(limits, { keepResult = false } = {}) {
  ctx.limits = limits && typeof limits === "object" ? limits : null;
  if (!ctx.limits) return;
  const cur = ctx.limits.currency;
  $("limits-per-payment-label").textContent = t("security.limits.perPaymentIn", { currency: cur });
  $("limits-daily-label").textContent = t("security.limits.dailyIn", { currency: cur });

  const facts = [
    [t("security.limits.perPayment"), amountText(ctx.limits.perPayment, cur)],
    [t("security.limits.daily"), amountText(ctx.limits.daily, cur)],
    [t("security.limits.coolingOff"), hoursText(ctx.limits.newRecipientCoolingOffHours)],
  ];
  $("limits-current").replaceChildren(
    ...facts.map(([dt, dd]) => {
      const div = document.createElement("div");
      const a = document.createElement("dt");
      a.textContent = dt;
      const b = document.createElement("dd");
      b.textContent = dd;
      div.append(a, b);
      return div;
    }),
  );
  const pending = pendingSentences(ctx.limits);
  $("limits-pending").textContent = pending.join(" ");
  $("limits-pending-box").hidden = pending.length === 0;
  if (!keepResult) $("limits-result").hidden = true;

  for (const { member, input } of AMOUNTS) $(input).value = inputText(ctx.limits[member], cur);
  fillCoolingOff(ctx.limits.newRecipientCoolingOffHours);
}

function fillCoolingOff(current) {
  const select = $("limits-cooling-off");
  const hours = [...COOLING_OFF];
  if (Number.isInteger(current) && !hours.includes(current)) hours.push(current);
  hours.sort((a, b) => a - b);
  select.replaceChildren(
    ...hours.map((h) => {
      const o = document.createElement("option");
      o.value = String(h);
      o.textContent = hoursText(h);
      return o;
    }),
  );
  select.value = String(Number.isInteger(current) ? current : 0);
}

// pendingSentences says what waits, one sentence per limit:
// "Your higher daily limit of $2,000.00 applies from Dec 7, 10:15 AM."
function pendingSentences(limits) {
  const p = limits.pending;
  if (!p || typeof p !== "object") return [];
  const time = whenText(p.effectiveAt);
  const cur = limits.currency;
  const out = [];
  if (Object.hasOwn(p, "perPayment")) {
    out.push(p.perPayment === null
      ? t("security.limits.pending.perPaymentRemoved", { time })
      : t("security.limits.pending.perPayment", { amount: formatMoney(p.perPayment, cur), time }));
  }
  if (Object.hasOwn(p, "daily")) {
    out.push(p.daily === null
      ? t("security.limits.pending.dailyRemoved", { time })
      : t("security.limits.pending.daily", { amount: formatMoney(p.daily, cur), time }));
  }
  if (Object.hasOwn(p, "newRecipientCoolingOffHours")) {
    const h = p.newRecipientCoolingOffHours;
    out.push(h === 0
      ? t("security.limits.pending.coolingOffOff", { time })
      : t("security.limits.pending.coolingOff", { wait: hoursText(h), time }));
  }
  return out;
}

async function onSave(event) {
  event.preventDefault();
  if (ctx.saving || !ctx.limits) return;
  clearErrors();
  $("limits-result").hidden = true;
  const cur = ctx.limits.currency;

  // What the person typed, read as money; only what changed is sent.
  const body = {};
  let bad = false;
  for (const { member, input } of AMOUNTS) {
    const text = $(input).value.trim();
    let value = null;
    if (text !== "") {
      const r = parseMoney(text, cur);
      if (!r.ok) {
        fieldError(input, r.message);
        bad = true;
        continue;
      }
      value = r.amount;
    }
    if (value !== (ctx.limits[member] ?? null)) body[member] = value;
  }
  const hours = Number.parseInt($("limits-cooling-off").value, 10);
  if (Number.isInteger(hours) && hours !== ctx.limits.newRecipientCoolingOffHours) body.newRecipientCoolingOffHours = hours;
  if (bad) return;
  if (Object.keys(body).length === 0) return showResult(t("security.limits.unchanged"));
  await save(body, savedSentence);
}

// onCancelPending stops a loosening that waits (one the person did not ask
// for, as the e-mail about it says to do): asking again for the limits that
// apply now drops what is pending for them, at once (a tightening needs no
// confirmation).
async function onCancelPending(event) {
  if (ctx.saving || !ctx.limits || !ctx.limits.pending) return;
  clearErrors();
  $("limits-result").hidden = true;
  const body = {};
  for (const member of ["perPayment", "daily", "newRecipientCoolingOffHours"]) {
    if (Object.hasOwn(ctx.limits.pending, member)) body[member] = ctx.limits[member] ?? null;
  }
  if (Object.keys(body).length === 0) return;
  await save(body, () => t("security.limits.pendingCancelled"));
  if (!$("limits-title").closest("[hidden]")) $("limits-title").focus();
}

// save sends body (a signed retry, confirmed when it loosens) and says
// what it did with sentence(body, limits).
async function save(body, sentence) {
  ctx.saving = true;
  const button = $("limits-save");
  button.disabled = true;
  $("limits-cancel-pending").disabled = true;
  button.setAttribute("aria-busy", "true");
  ctx.setStatus(t("security.limits.saving"));
  try {
    if (!/^InternalAccount:[0-9a-f-]{36}$/.test(ctx.accountId)) throw new Error(t("security.limits.error.noWallet"));
    const { data } = await signedRetry("PATCH", "/api/internal-accounts/" + ctx.accountId + "/limits", body);
    ctx.setStatus("");
    draw(data, { keepResult: true });
    showResult(sentence(body, data));
    // The change is in the security log now (log.js shows it).
    document.dispatchEvent(new CustomEvent("wallet:security-log"));
  } catch (err) {
    ctx.setStatus("");
    if (err instanceof StepUpCancelled) return showResult(t("security.limits.cancelled"));
    if (err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED") return; // signed out
    if (err instanceof ApiError && err.status === 400) {
      const fields = err.fieldErrors();
      const where = { perPayment: "limits-per-payment", daily: "limits-daily", newRecipientCoolingOffHours: "limits-cooling-off" };
      let shown = false;
      for (const [field, message] of Object.entries(fields)) {
        if (Object.hasOwn(where, field)) {
          fieldError(where[field], t("security.limits.error.field", { problem: message.replace(/\.$/, "") }));
          shown = true;
        }
      }
      if (shown) return;
    }
    if (err instanceof ApiError && err.status === 423 && err.details && err.details.lockedUntil) {
      return showError(t("security.limits.error.locked", { time: whenText(err.details.lockedUntil) }));
    }
    showError(t("security.limits.error.save", { reason: messageOf(err) }));
  } finally {
    ctx.saving = false;
    button.disabled = false;
    $("limits-cancel-pending").disabled = false;
    button.removeAttribute("aria-busy");
  }
}

// savedSentence tells what the change did: applied now, waiting until its
// time, or both.
function savedSentence(sent, limits) {
  const pending = limits && limits.pending && typeof limits.pending === "object" ? limits.pending : {};
  const waiting = Object.keys(sent).filter((m) => Object.hasOwn(pending, m));
  const now = Object.keys(sent).length - waiting.length;
  const parts = [];
  if (now > 0) parts.push(t(waiting.length ? "security.limits.savedSomeNow" : "security.limits.savedNow"));
  if (waiting.length) parts.push(...pendingSentences(limits), t("security.limits.savedLater"));
  return parts.join(" ");
}

function showResult(text) {
  const el = $("limits-result");
  el.textContent = text;
  el.hidden = false;
}

function showError(text) {
  const el = $("limits-error");
  el.textContent = text;
  el.hidden = false;
}

function clearErrors() {
  $("limits-error").hidden = true;
  for (const id of ["limits-per-payment", "limits-daily", "limits-cooling-off"]) fieldError(id, "");
}

function fieldError(input, text) {
  const el = $(input + "-error");
  el.textContent = text;
  el.hidden = text === "";
  if (text) {
    $(input).setAttribute("aria-invalid", "true");
    // The first field named keeps the focus.
    if (!document.activeElement || document.activeElement.getAttribute("aria-invalid") !== "true") $(input).focus();
  } else {
    $(input).removeAttribute("aria-invalid");
  }
}

/** An amount limit in words: "$500.00", or "No limit". */
function amountText(amount, currency) {
  if (amount === null || amount === undefined) return t("security.limits.none");
  return formatMoney(amount, currency) || String(amount);
}

// inputText is a limit as the person would type it: the number in their
// locale's way, without the currency (the label names it), "" for none.
function inputText(amount, currency) {
  if (amount === null || amount === undefined) return "";
  const plain = decimalAmount(amount, currency);
  if (!plain) return "";
  const decimals = plain.includes(".") ? plain.split(".")[1].length : 0;
  try {
    // A string is formatted exactly (no float in between).
    return new Intl.NumberFormat(getLocale(), { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(plain);
  } catch {
    return plain;
  }
}

/** A cooling-off in words: "No wait", "24 hours", "7 days". */
export function hoursText(h) {
  if (!Number.isInteger(h) || h <= 0) return t("security.limits.wait.none");
  if (h % 24 === 0) return t("security.limits.wait.days", { count: h / 24 });
  return t("security.limits.wait.hours", { count: h });
}

/** A time of a pending change: "Dec 7, 10:15 AM". */
export function whenText(iso) {
  const ms = typeof iso === "string" ? Date.parse(iso) : NaN;
  if (!Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleString(getLocale(), { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
}

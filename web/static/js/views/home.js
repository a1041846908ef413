// The Home view (/): the balance card, what the wallet holds, and in
// sandbox mode an "Add funds" action that opens a form adding test money
// (POST /api/sandbox/fund); under it the last payments (the newest entries
// of the Activity list, views/activity.js onRecent). Drawn while signed in
// whatever the view, so that Home is there at once.
//
// The card shows the wallet account's balance (balance.js) as "Available"
// and the money on hold, when there is some, as "On hold".

import { api, ApiError, messageOf } from "../api.js";
import { forgetAccount, heldAmount, onBalance, refreshBalance, showAccount, walletCurrency } from "../balance.js";
import { formatMoney, parseMoney } from "../format.js";
import { getLocale, t } from "../i18n.js";
import { listItem } from "../payments.js";
import { onRecent, reloadTransactions } from "./activity.js";
import { statementChanged } from "./statement.js";

const $ = (id) => document.getElementById(id);

// The service's limit for one sandbox funding, in the smallest unit.
const MAX_FUNDING = 100000000000;

const ctx = {
  config: () => null, // () => GET /api/config
  setStatus: () => {},
  fundOpen: false, // the "Add funds" form is open
};

/** Wires the view once. */
export function init({ config, setStatus }) {
  ctx.config = config;
  ctx.setStatus = setStatus;
  $("fund-form").addEventListener("submit", onFund);
  $("home-fund").addEventListener("click", () => openFunding(!ctx.fundOpen));
  $("fund-amount").addEventListener("input", () => fieldError(""));
  onBalance(render);
  onRecent(renderRecent);
}

/** Signed in: the balance of the wallet account, as GET /api/me read it. */
export function signIn(me) {
  showAccount((me && me.internalAccount) || null);
}

/** Signed out: hides the card and forgets the account (another person may sign in). */
export function signOut() {
  forgetAccount();
  $("balance").hidden = true;
  $("account-balance").textContent = "";
  $("account-on-hold").textContent = "";
  $("fund-amount").value = "";
  fieldError("");
  openFunding(false, { focus: false });
}

// onFunded: money was added; the list and the statement show it.
function onFunded() {
  reloadTransactions();
  statementChanged();
}

function render(account) {
  const a = account || {};
  const balance = a.balance || {};
  const currency = balance.currency || {};
  $("balance").hidden = false;
  $("account-balance").textContent = money(balance.amount, currency);
  const held = heldAmount();
  $("on-hold-row").hidden = held <= 0;
  $("account-on-hold").textContent = held > 0 ? money(held, currency) : "";
  const sandbox = !!ctx.config() && ctx.config().mode === "sandbox";
  $("home-fund").hidden = !sandbox;
  $("fund-form").hidden = !sandbox || !ctx.fundOpen;
  $("fund-currency").textContent = currency.code || "";
  const label = t("home.fund.amountLabel");
  const at = label.indexOf("{currency}");
  if (at >= 0) $("fund-amount-label").replaceChildren(label.slice(0, at), $("fund-currency"), label.slice(at + "{currency}".length));
  $("fund-amount").placeholder = examplePlaceholder(currency);
}

// money writes an amount of the wallet's currency in the person's locale
// (format.js formatMoney) followed by the currency's code unless the text
// already names it: "$1,234.56 USD" in en-US, "1.234,56 $ USD" in de-DE,
// "0.015 BTC".
function money(amount, currency) {
  const text = formatMoney(amount, currency);
  const code = currency && typeof currency.code === "string" ? currency.code : "";
  if (!text || !code || text.includes(code)) return text;
  return t("home.balance.withCode", { amount: text, code });
}

// examplePlaceholder is 100 in the currency's decimals, in the person's
// locale: "100.00" in en-US, "100,00" in de-DE.
function examplePlaceholder(currency) {
  const decimals = Number.isInteger(currency.decimals) && currency.decimals >= 0 && currency.decimals <= 18 ? currency.decimals : 2;
  try {
    return new Intl.NumberFormat(getLocale(), { minimumFractionDigits: decimals, maximumFractionDigits: decimals, useGrouping: false }).format(100);
  } catch {
    return "100";
  }
}

// parseFunding reads the amount typed in the person's locale ("100.50" in
// en-US, "100,50" in de-DE) without floats; its messages say what to type.
function parseFunding(text, currency) {
  const parsed = parseMoney(text, currency, { max: MAX_FUNDING });
  return parsed.ok ? { ok: true, amount: Number(parsed.minor) } : parsed;
}

/**
 * Opens or closes the "Add funds" form of Home (sandbox only).
 *
 * @param {boolean} open
 * @param {{focus?: boolean}} [options] focus: move the focus into the form
 *   when it opens, back to the button when it closes (default true)
 */
function openFunding(open, { focus = true } = {}) {
  const sandbox = !!ctx.config() && ctx.config().mode === "sandbox";
  ctx.fundOpen = !!open && sandbox;
  $("home-fund").setAttribute("aria-expanded", String(ctx.fundOpen));
  $("fund-form").hidden = !ctx.fundOpen || $("balance").hidden;
  if (!focus) return;
  if (ctx.fundOpen) $("fund-amount").focus();
  else if (!$("home-fund").hidden) $("home-fund").focus();
}

// onFund adds sandbox money: the amount typed in major units, in the
// person's locale, becomes the smallest unit without floating point
// (parseMoney), and the answer (the account) is shown at once.
async function onFund(event) {
  event.preventDefault();
  fieldError("");
  const currency = walletCurrency();
  if (!currency) return fieldError(t("home.fund.error.currency"));
  const parsed = parseFunding($("fund-amount").value, currency);
  if (!parsed.ok) {
    const text = parsed.reason === "TOO_LARGE"
      ? t("home.fund.error.max", { max: money(MAX_FUNDING, currency) })
      : parsed.message;
    return fieldError(text);
  }
  const button = $("fund-submit");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  ctx.setStatus(t("home.fund.adding"));
  try {
    const key = typeof crypto.randomUUID === "function" ? crypto.randomUUID() : "";
    const { data } = await api("POST", "/api/sandbox/fund", {
      body: { amount: parsed.amount },
      headers: key ? { "Idempotency-Key": key } : {},
    });
    if (data && data.balance) showAccount(data);
    else await refreshBalance();
    $("fund-amount").value = "";
    ctx.setStatus(t("home.fund.added", { amount: money(parsed.amount, currency) }));
    onFunded();
  } catch (err) {
    ctx.setStatus("");
    if (err instanceof ApiError && err.status === 401 && (err.code === "UNAUTHORIZED" || err.code === "HTTP_401")) return;
    if (err instanceof ApiError && err.status === 403) {
      return fieldError(t("home.fund.error.sandboxOnly"));
    }
    const fields = err instanceof ApiError ? err.fieldErrors() : {};
    if (fields.amount) return fieldError(t("home.fund.error.amount", { problem: fields.amount.replace(/\.$/, "") }));
    fieldError(t("home.fund.error.failed", { reason: messageOf(err) }));
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

function fieldError(text) {
  const el = $("fund-error");
  el.textContent = text;
  el.hidden = text === "";
  if (text) {
    $("fund-amount").setAttribute("aria-invalid", "true");
    $("fund-amount").focus();
  } else {
    $("fund-amount").removeAttribute("aria-invalid");
  }
}

// renderRecent draws the last payments (recent, from the Activity list;
// shown: whether it is loaded).
function renderRecent(recent, shown) {
  const list = $("recent-list");
  const focused = list.contains(document.activeElement) && document.activeElement.dataset ? document.activeElement.dataset.open : "";
  list.replaceChildren(...recent.map((x) => listItem(x, { compact: true })));
  if (focused) {
    const again = list.querySelector('a[data-open="' + CSS.escape(focused) + '"]');
    if (again) again.focus({ preventScroll: true });
  }
  $("recent-empty").hidden = recent.length > 0 || !shown;
}

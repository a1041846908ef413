// The balance card of Home: what the wallet holds, and in sandbox mode an
// "Add funds" action that opens a form adding test money (POST
// /api/sandbox/fund).
//
// The wallet account (GET /api/me → internalAccount) has two amounts:
// balance, what can be spent now, and totalBalance, which also counts the
// money on hold: payments on their way that have not settled, and money of
// a failed payment whose return has not completed. The card shows the
// first as "Available" and the difference, when there is one, as "On hold".

import { api, ApiError, messageOf } from "./api.js";
import { formatMoney, parseMoney } from "./format.js";
import { getLocale, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

// The service's limit for one sandbox funding, in the smallest unit.
const MAX_FUNDING = 100000000000;

const ctx = {
  config: () => null, // () => GET /api/config
  setStatus: () => {},
  onFunded: () => {}, // called after money was added
  account: null, // the InternalAccount shown
  fundOpen: false, // the "Add funds" form is open
  asked: 0, // generation of the last GET /api/me asked for
  shown: 0, // generation of the answer shown; older answers are dropped
};

/**
 * Wires the card once.
 *
 * @param {{config: () => object|null, setStatus: (text: string) => void, onFunded: () => void}} options
 */
export function initBalance({ config, setStatus, onFunded }) {
  ctx.config = config;
  ctx.setStatus = setStatus;
  ctx.onFunded = onFunded;
  $("fund-form").addEventListener("submit", onFund);
  $("home-fund").addEventListener("click", () => openFunding(!ctx.fundOpen));
  $("fund-amount").addEventListener("input", () => fieldError(""));
}

/**
 * Shows the card for the wallet account (an InternalAccount), read just now:
 * answers to refreshBalance calls made before are dropped.
 *
 * @param {object} account
 */
export function showBalance(account) {
  ctx.shown = ctx.asked;
  render(account);
}

function render(account) {
  ctx.account = account && typeof account === "object" ? account : null;
  const a = ctx.account || {};
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

/** Hides the card and forgets the account (another person may sign in). */
export function hideBalance() {
  ctx.shown = ++ctx.asked;
  ctx.account = null;
  $("balance").hidden = true;
  $("account-balance").textContent = "";
  $("account-on-hold").textContent = "";
  $("fund-amount").value = "";
  fieldError("");
  openFunding(false, { focus: false });
}

/**
 * Opens or closes the "Add funds" form of Home (sandbox only).
 *
 * @param {boolean} open
 * @param {{focus?: boolean}} [options] focus: move the focus into the form
 *   when it opens, back to the button when it closes (default true)
 */
export function openFunding(open, { focus = true } = {}) {
  const sandbox = !!ctx.config() && ctx.config().mode === "sandbox";
  ctx.fundOpen = !!open && sandbox;
  $("home-fund").setAttribute("aria-expanded", String(ctx.fundOpen));
  $("fund-form").hidden = !ctx.fundOpen || $("balance").hidden;
  if (!focus) return;
  if (ctx.fundOpen) $("fund-amount").focus();
  else if (!$("home-fund").hidden) $("home-fund").focus();
}

/** What can be spent now in the smallest unit, or NaN before it is known. */
export function availableAmount() {
  const b = ctx.account && ctx.account.balance;
  return b && Number.isFinite(b.amount) ? b.amount : NaN;
}

/** The currency of the wallet (a Currency object), or null before it is known. */
export function walletCurrency() {
  const b = ctx.account && ctx.account.balance;
  return b && b.currency && typeof b.currency === "object" ? b.currency : null;
}

/** The wallet account's id, or "". */
export function walletAccountId() {
  return ctx.account && typeof ctx.account.id === "string" ? ctx.account.id : "";
}

/** The money on hold (totalBalance − balance) in the smallest unit, 0 when none. */
export function heldAmount() {
  const a = ctx.account || {};
  const total = a.totalBalance && Number.isFinite(a.totalBalance.amount) ? a.totalBalance.amount : NaN;
  const available = a.balance && Number.isFinite(a.balance.amount) ? a.balance.amount : NaN;
  return Number.isFinite(total) && Number.isFinite(available) && total > available ? total - available : 0;
}

/**
 * Asks the BFF for the wallet account again (GET /api/me) and shows it,
 * unless the answer to a later call is shown already. When it resolves, the
 * card shows an account at least as recent as this call's answer (so a
 * caller may read heldAmount()). Resolves with the account, or null when it
 * could not be read (a 401 signs the page out through api.js).
 *
 * @returns {Promise<object|null>}
 */
export async function refreshBalance() {
  const generation = ++ctx.asked;
  try {
    const { data } = await api("GET", "/api/me");
    if (generation <= ctx.shown || $("balance").hidden) return null;
    const account = data && data.internalAccount;
    if (!account || (ctx.account && account.id !== ctx.account.id)) return null;
    ctx.shown = generation;
    render(account);
    return account;
  } catch {
    return null;
  }
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
    if (data && data.balance) showBalance(data);
    else await refreshBalance();
    $("fund-amount").value = "";
    ctx.setStatus(t("home.fund.added", { amount: money(parsed.amount, currency) }));
    ctx.onFunded();
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

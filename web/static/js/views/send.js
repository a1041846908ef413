// The Send view (/send): a payment from the wallet to one of the person's
// ACTIVE external accounts, in four steps shown one at a time: the
// recipient, the amount (with the side the person sets: what they send or
// what the recipient receives), the review of the quote with its countdown,
// and the result, which is the payment's own view (/activity/{id}).
// An amount above the available balance is refused before any quote is
// asked for.
//
// Under the steps, two calls:
//
//   1. Get quote: POST /api/quotes {destination, lockedCurrencySide,
//      lockedCurrencyAmount, description?} (the BFF sets the source: the
//      cookie's wallet). The quote holds a rate and the fees until expiresAt.
//   2. Send: the quote's payloadToSign is stamped by the wallet module with
//      this tab's session key, and POST /api/quotes/{id}/execute carries the
//      stamp (Service-Wallet-Signature) and a fresh Idempotency-Key per click.
//
// Before anything is stamped the page checks that payloadToSign names this
// very quote and its two amounts: a stamp authorizes exactly what it covers,
// so the person must be shown what they sign. A quote that does not bind
// what is shown is refused.
//
// The quote's countdown runs on the monotonic clock from the quote's own
// lifetime (expiresAt − createdAt, counted from when it was asked for), so a
// wrong device clock cannot make an expired quote look valid. When it ends,
// or the service answers that the quote expired, "Get a new quote" asks
// again with the same body.

import { api, ApiError, messageOf } from "../api.js";
import { accountLabel } from "../recipients.js";
import { availableAmount, refreshBalance, walletAccountId, walletCurrency } from "../balance.js";
import { formatCountdown, formatExchangeRate, formatMoney, formatTime, parseMoney } from "../format.js";
import { t } from "../i18n.js";
import { LIMIT_CODES, limitText, railName } from "../payments.js";
import { reloadTransactions } from "./activity.js";
import { navigate, paths } from "../router.js";
import { confirmStepUp, StepUpCancelled } from "../stepup.js";

const $ = (id) => document.getElementById(id);

// An account's status → the key of its name in the list of recipients.
const STATUS_KEY = {
  PENDING: "send.recipient.status.pending",
  UNDER_REVIEW: "send.recipient.status.underReview",
  INACTIVE: "send.recipient.status.inactive",
};

const ctx = {
  wallet: null, // () => Promise<paywallet>
  key: null, // () => {handle, publicKey, sessionId} | null
  keyPending: () => false, // the key is being resumed (the view was drawn first)
  keyReady: async () => null, // () => Promise of the key, once it is known
  setStatus: () => {},
  accounts: [], // ExternalAccounts, as the Accounts section last listed them
  rates: new Map(), // currency code → Promise<{currency, rows}> from /api/exchange-rates
  request: null, // {body, accountId} of the quote shown: "Get a new quote" sends body again
  quote: null, // the Quote shown
  deadline: 0, // performance.now() at which it expires
  timer: 0,
  expired: false,
  blocked: "", // why the quote shown cannot be sent (not signable, gone), "" when it can
  sending: false,
  held: null, // {quoteId, challenge}: the quote the service holds for the person's confirmation
  quoting: 0, // generation of the quote being asked for
  step: "recipient", // the step shown: recipient, amount, review
};

const STEPS = ["recipient", "amount", "review", "result"];

/**
 * Wires the view once (shell: app.js).
 *
 * key is this tab's session key, or null; while keyPending() the page is
 * drawn and the key still being resumed, and keyReady() waits for it.
 *
 * @param {{wallet: () => Promise<object>, key: () => object|null, keyPending: () => boolean, keyReady: () => Promise<object|null>, setStatus: (text: string) => void}} options
 */
export function init({ wallet, key, keyPending, keyReady, setStatus }) {
  ctx.wallet = wallet;
  ctx.key = key;
  ctx.keyPending = keyPending;
  ctx.keyReady = keyReady;
  // The key became known (or turned out to be missing) after the view was drawn.
  document.addEventListener("wallet:key", updateSendButton);
  ctx.setStatus = setStatus;
  document.addEventListener("wallet:accounts", (event) => {
    ctx.accounts = Array.isArray(event.detail.accounts) ? event.detail.accounts : [];
    renderAccounts();
  });
  $("send-account").addEventListener("change", onAccountChange);
  $("send-next").addEventListener("click", onNext);
  $("send-change").addEventListener("click", () => setStep("recipient", { focus: true }));
  for (const radio of document.querySelectorAll('input[name="send-side"]')) radio.addEventListener("change", renderSide);
  $("send-form").addEventListener("submit", onQuote);
  $("send-amount").addEventListener("input", () => fieldError("amount", ""));
  $("send-note").addEventListener("input", () => fieldError("note", ""));
  $("send-submit").addEventListener("click", onSend);
  $("quote-renew").addEventListener("click", onRenew);
  // "See or change your limits": Security at its Limits part, without a
  // page load (the router leaves links with a fragment to the browser).
  for (const a of document.querySelectorAll("#view-send a[data-limits-link]")) {
    a.addEventListener("click", (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate("/security#limits");
    });
  }
  $("quote-cancel").addEventListener("click", () => {
    closeQuote();
    $("send-amount").focus();
  });
  setStep("recipient");
}

/**
 * The Send view was entered (its address, a link, back or forward): a
 * payment sent before starts a new one; one under way is kept as it is.
 */
export function show() {
  if (ctx.step === "result") {
    $("send-form").reset();
    renderSide();
    setStep("recipient");
  }
  renderAvailable();
}

// setStep shows one step of the flow and marks it in the progress list.
function setStep(step, { focus = false } = {}) {
  ctx.step = step;
  $("send-step-recipient").hidden = step !== "recipient";
  $("send-step-amount").hidden = step !== "amount";
  $("send-form").hidden = step !== "recipient" && step !== "amount";
  const at = STEPS.indexOf(step);
  for (const li of $("send-steps").children) {
    const i = STEPS.indexOf(li.dataset.step);
    if (i === at) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
    li.classList.toggle("done", i < at);
  }
  if (!focus) return;
  if (step === "recipient") $("send-account").focus();
  else if (step === "amount") $("send-amount").focus();
}

// onNext leaves the recipient step for the amount once an ACTIVE account
// is chosen.
function onNext() {
  clearErrors();
  const account = selectedAccount();
  if (!account || account.status !== "ACTIVE") return fieldError("account", t("send.recipient.error.none"));
  $("send-to").textContent = t("send.recipient.account", { account: accountLabel(account), currency: account.currency || "" });
  renderAvailable();
  setStep("amount", { focus: true });
}

// renderAvailable says how much can be sent, under the amount.
function renderAvailable() {
  const currency = walletCurrency();
  const available = availableAmount();
  const el = $("send-available");
  el.textContent = currency && Number.isFinite(available) ? t("send.amount.available", { amount: formatMoney(available, currency) }) : "";
  el.hidden = el.textContent === "";
}

/** Signed in: shows the view's section (again): the key may have come or gone since. */
export function signIn() {
  $("send").hidden = false;
  renderAccounts();
  renderAvailable();
  updateSendButton();
}

/** Signed out: hides the section and forgets what it held (another person may sign in). */
export function signOut() {
  ctx.quoting++;
  ctx.accounts = [];
  ctx.rates.clear();
  closeQuote();
  $("send").hidden = true;
  $("send-form").reset();
  $("send-account").replaceChildren();
  delete $("send-account").dataset.drawn;
  clearErrors();
  renderSide();
  setStep("recipient");
}

// ---- the form -----------------------------------------------------------------

function selectedAccount() {
  const id = $("send-account").value;
  return ctx.accounts.find((a) => a && a.id === id) || null;
}

// renderAccounts lists every account, the ACTIVE ones to choose from and
// the others disabled with their status; it keeps the choice when it can.
function renderAccounts() {
  const select = $("send-account");
  const before = select.value;
  const active = ctx.accounts.filter((a) => a && a.status === "ACTIVE");
  const others = ctx.accounts.filter((a) => a && a.status !== "ACTIVE");
  const options = [new Option(t(active.length ? "send.recipient.choose" : "send.recipient.noneActive"), "")];
  for (const a of active) options.push(new Option(t("send.recipient.account", { account: accountLabel(a), currency: a.currency || "" }), a.id));
  for (const a of others) {
    const status = STATUS_KEY[a.status] ? t(STATUS_KEY[a.status]) : String(a.status || "").toLowerCase();
    const o = new Option(t("send.recipient.accountInactive", { account: accountLabel(a), currency: a.currency || "", status }), a.id);
    o.disabled = true;
    options.push(o);
  }
  // Drawn again only when something changed: the list is looked at again
  // while an account is pending, and a person may have it open.
  const drawn = options.map((o) => o.value + "\t" + o.text + "\t" + o.disabled).join("\n");
  if (select.dataset.drawn !== drawn) {
    select.replaceChildren(...options);
    select.dataset.drawn = drawn;
  }
  if (active.some((a) => a.id === before)) select.value = before;
  else if (active.length === 1) select.value = active[0].id;
  else select.value = "";

  let hint = "";
  if (ctx.accounts.length === 0) hint = t("send.recipient.hint.none");
  else if (active.length === 0) hint = t("send.recipient.hint.noneActive");
  else if (others.length > 0) hint = t("send.recipient.hint.someInactive");
  $("send-account-hint").textContent = hint;
  $("send-account-hint").hidden = hint === "";
  $("quote-submit").disabled = active.length === 0;
  $("send-next").disabled = active.length === 0;
  // The account paid in the amount step went away (removed, or no longer active).
  if (ctx.step === "amount" && !active.some((a) => a.id === before)) setStep("recipient");
  if (select.value !== before) onAccountChange();
  else renderSide();
}

// onAccountChange looks up the destination currency (its decimals, an
// indicative rate and the limits) for the chosen account.
async function onAccountChange() {
  fieldError("account", "");
  renderSide();
  const account = selectedAccount();
  const hint = $("send-amount-hint");
  hint.textContent = "";
  hint.hidden = true;
  if (!account) return;
  const [info, own] = await Promise.all([ratesFor(account.currency), perPaymentLimit()]);
  if (selectedAccount() !== account) return;
  renderSide();
  if (!info || !info.rows.length) return;
  const row = info.rows[0];
  const from = walletCurrency() || (typeof row.sourceCurrency === "object" ? row.sourceCurrency : null);
  const parts = [];
  if (from && info.currency && from.code !== info.currency.code) {
    // exchangeRate is sending units per receiving unit.
    const rate = formatExchangeRate(row.exchangeRate, from, info.currency);
    if (rate) parts.push(t("send.amount.indicativeRate", { rate }));
  }
  const mins = info.rows.map((r) => r.minSendingAmount).filter(Number.isFinite);
  const maxes = info.rows.map((r) => r.maxSendingAmount).filter(Number.isFinite);
  if (from && mins.length && maxes.length) {
    const min = Math.min(...mins);
    const max = Math.max(...maxes);
    // The person's own limit per payment (Security → Limits), in the
    // wallet's currency, when it is the tighter one.
    const cap = own !== null && own.currency === from.code ? own.amount : Infinity;
    if (cap < min) {
      parts.push(t("send.amount.ownLimit", { limit: formatMoney(cap, from) }));
    } else if (cap < max) {
      parts.push(t("send.amount.limitsOwn", { min: formatMoney(min, from), max: formatMoney(cap, from) }));
    } else {
      parts.push(t("send.amount.limits", { min: formatMoney(min, from), max: formatMoney(max, from) }));
    }
  }
  hint.textContent = parts.join(" ");
  hint.hidden = parts.length === 0;
}

// perPaymentLimit is the person's own limit per payment as it applies now
// ({amount, currency}, the wallet's smallest unit), asked of the BFF each
// time (the person may just have changed it); null when none is set or it
// could not be read (the service refuses a payment over it anyway).
async function perPaymentLimit() {
  const id = walletAccountId();
  if (!/^InternalAccount:[0-9a-f-]{36}$/.test(id)) return null;
  try {
    const { data } = await api("GET", "/api/internal-accounts/" + id + "/limits");
    const amount = data && data.perPayment;
    return Number.isSafeInteger(amount) && typeof data.currency === "string" ? { amount, currency: data.currency } : null;
  } catch {
    return null;
  }
}

// ratesFor asks the BFF once per currency for its exchange rates; the
// answer names the currency (with its decimals). null when unavailable.
function ratesFor(code) {
  if (typeof code !== "string" || code === "") return Promise.resolve(null);
  if (!ctx.rates.has(code)) {
    const p = api("GET", "/api/exchange-rates?" + new URLSearchParams({ destinationCurrency: code })).then(({ data }) => {
      const rows = data && Array.isArray(data.data) ? data.data : [];
      const c = rows.length && rows[0].destinationCurrency;
      const currency = c && typeof c === "object" && Number.isInteger(c.decimals) ? c : null;
      return { currency, rows };
    });
    p.catch(() => ctx.rates.delete(code)); // asked again next time
    ctx.rates.set(code, p);
  }
  return ctx.rates.get(code).catch(() => null);
}

function side() {
  const checked = document.querySelector('input[name="send-side"]:checked');
  return checked && checked.value === "RECEIVING" ? "RECEIVING" : "SENDING";
}

// renderSide labels the two sides with their currencies, and the amount
// with the currency of the side chosen.
function renderSide() {
  const account = selectedAccount();
  const from = walletCurrency();
  const to = account ? account.currency || "" : "";
  $("send-side-sending-label").textContent = from ? t("send.side.sendingIn", { currency: from.code }) : t("send.side.sending");
  $("send-side-receiving-label").textContent = to ? t("send.side.receivingIn", { currency: to }) : t("send.side.receiving");
  const code = side() === "RECEIVING" ? to : from ? from.code : "";
  $("send-amount-label").textContent = code ? t("send.amount.labelIn", { currency: code }) : t("send.amount.label");
}

async function onQuote(event) {
  event.preventDefault();
  clearErrors();
  const account = selectedAccount();
  if (!account || account.status !== "ACTIVE") return fieldError("account", t("send.recipient.error.choose"));
  const locked = side();
  let currency;
  let info = null;
  if (locked === "SENDING") {
    currency = walletCurrency();
    if (!currency) return formError(t("send.error.currencyUnknown"));
  } else {
    info = await ratesFor(account.currency);
    currency = info && info.currency;
    if (!currency) {
      return fieldError("amount", t("send.amount.error.decimalsUnknown", { currency: String(account.currency || "") }));
    }
  }
  const parsed = parseMoney($("send-amount").value, currency);
  if (!parsed.ok) return fieldError("amount", parsed.message);
  const over = overBalance(locked, parsed.amount, info);
  if (over) return fieldError("amount", over);
  const note = $("send-note").value.trim();
  if ([...note].length > 255) return fieldError("note", t("send.note.error.tooLong", { max: 255 }));
  if (/[\u0000-\u001f\u007f]/.test(note)) return fieldError("note", t("send.note.error.oneLine"));

  const body = {
    destination: { destinationType: "ACCOUNT", accountId: account.id },
    lockedCurrencySide: locked,
    lockedCurrencyAmount: parsed.amount,
  };
  if (note) body.description = note;
  await requestQuote({ body: JSON.stringify(body), accountId: account.id }, $("quote-submit"));
}

// overBalance says why an amount cannot be paid from the available balance,
// before a quote is asked for: exactly when the person sets what they
// send; from the indicative rate (fees come on top) when they set what the
// recipient receives (info: the destination currency's rates). "" when it
// may be paid, or when that is not known.
function overBalance(locked, amount, info) {
  const available = availableAmount();
  const from = walletCurrency();
  if (!from || !Number.isFinite(available)) return "";
  const have = formatMoney(available, from);
  if (locked === "SENDING") {
    return amount > available ? t("send.amount.error.overBalance", { available: have }) : "";
  }
  const row = info && info.rows[0];
  if (!row || !info.currency || !(row.exchangeRate > 0)) return "";
  // exchangeRate is sending units per receiving unit.
  const estimate = Math.ceil((amount / 10 ** info.currency.decimals) * row.exchangeRate * 10 ** from.decimals);
  return estimate > available
    ? t("send.amount.error.overBalanceEstimate", { available: have, estimate: formatMoney(estimate, from) })
    : "";
}

function onRenew() {
  if (ctx.request && !ctx.sending) requestQuote(ctx.request, $("quote-renew"));
}

// requestQuote asks for a quote with exactly this body and shows it. Its
// errors are shown on the form, next to the field they concern.
async function requestQuote(request, button) {
  const generation = ++ctx.quoting;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  ctx.setStatus(t("send.status.quoting"));
  const started = performance.now();
  try {
    const res = await api("POST", "/api/quotes", { body: request.body });
    if (generation !== ctx.quoting) return;
    if (!res.data || typeof res.data.id !== "string") throw new Error(t("send.error.unexpectedQuote", { status: String(res.status) }));
    ctx.request = request;
    showQuote(res.data, started);
  } catch (err) {
    if (generation !== ctx.quoting) return;
    ctx.setStatus("");
    if (err instanceof ApiError && err.status === 401 && (err.code === "UNAUTHORIZED" || err.code === "HTTP_401")) return;
    closeQuote();
    quoteError(err);
  } finally {
    button.disabled = button.id === "quote-submit" && !ctx.accounts.some((a) => a && a.status === "ACTIVE");
    button.removeAttribute("aria-busy");
  }
}

function quoteError(err) {
  if (!(err instanceof ApiError)) return formError(t("send.error.quote", { reason: messageOf(err) }));
  if (LIMIT_CODES.has(err.code)) {
    formError(limitText(err));
    $("send-limits-link").hidden = false;
    return;
  }
  if (err.code === "AMOUNT_OUT_OF_RANGE") {
    const d = err.details || {};
    const from = walletCurrency() || {};
    if (Number.isFinite(d.minSendingAmount) && Number.isFinite(d.maxSendingAmount)) {
      return fieldError("amount", t("send.amount.error.range", {
        min: formatMoney(d.minSendingAmount, from),
        max: formatMoney(d.maxSendingAmount, from),
      }));
    }
    return fieldError("amount", t("send.amount.error.outOfRange"));
  }
  if (err.code === "INVALID_CURRENCY") return formError(t("send.error.noRate"));
  const fields = err.fieldErrors();
  let shown = false;
  for (const [field, message] of Object.entries(fields)) {
    const where = field.startsWith("destination") ? "account" : field === "lockedCurrencyAmount" ? "amount" : field === "description" ? "note" : "";
    if (where && $("send-" + where + "-error").hidden) {
      const key = where === "account" ? "send.recipient.error.field" : where === "amount" ? "send.amount.error.field" : "send.note.error.field";
      fieldError(where, t(key, { problem: message.replace(/\.$/, "") }));
      shown = true;
    }
  }
  if (!shown) formError(t("send.error.quote", { reason: messageOf(err) }));
}

// ---- the quote ----------------------------------------------------------------

function showQuote(q, started) {
  ctx.quote = q;
  ctx.expired = false;
  const lifetime = Date.parse(q.expiresAt) - Date.parse(q.createdAt);
  ctx.deadline = Number.isFinite(lifetime) && lifetime > 0 ? started + lifetime : performance.now() + (Date.parse(q.expiresAt) - Date.now());
  if (!Number.isFinite(ctx.deadline)) ctx.deadline = performance.now();

  const send = q.sendingCurrency || {};
  const receive = q.receivingCurrency || {};
  const account = ctx.accounts.find((a) => a && a.id === (q.destination && q.destination.accountId));
  $("quote-to").textContent = account ? accountLabel(account) : String((q.destination && q.destination.accountId) || "");
  $("quote-send").textContent = formatMoney(q.totalSendingAmount, send);
  $("quote-fees").textContent = formatMoney(q.feesIncluded, send);
  $("quote-receive").textContent = formatMoney(q.totalReceivingAmount, receive);
  // The rate as people read it (a number of 1 or more: "1 USD = 17.094
  // MXN"), then the other way round. exchangeRate is sending units per
  // receiving unit.
  const rate = formatExchangeRate(q.exchangeRate, send, receive);
  const readsReceiving = q.exchangeRate >= 1;
  const inverse = rate ? formatExchangeRate(q.exchangeRate, send, receive, { base: readsReceiving ? codeOf(send) : codeOf(receive) }) : "";
  $("quote-rate").textContent = rate;
  $("quote-rate-inverse").textContent = inverse && codeOf(send) !== codeOf(receive) ? t("send.review.rateInverse", { rate: inverse }) : "";
  const rail = q.destination && q.destination.paymentRail;
  $("quote-rail").textContent = rail ? railName(rail) : "";
  $("quote-rail-row").hidden = !rail;
  $("quote-note").textContent = q.description || "";
  $("quote-note-row").hidden = !q.description;
  $("quote-expiry").dateTime = typeof q.expiresAt === "string" ? q.expiresAt : "";
  $("quote-id").textContent = q.id;

  const problem = bindingProblem(q);
  ctx.blocked = problem ? t("send.review.blocked", { problem }) : "";
  $("quote-error").textContent = problem ? t("send.error.unbound") : "";
  $("quote-error").hidden = !problem;
  $("quote-limits-link").hidden = true;
  $("quote-expired").hidden = true;
  $("quote-renew").hidden = !problem;
  setStep("review");
  $("quote").hidden = false;
  $("quote").dataset.quoteId = q.id;
  updateSendButton();
  startCountdown();
  ctx.setStatus(t(problem ? "send.status.unsignable" : "send.status.review"));
  $("quote-title").focus();
}

// bindingProblem checks that payloadToSign is about exactly the quote shown:
// its unsignedTransaction names this quote, its two amounts and (when it
// says) its destination and currencies. "" when it is, a reason when not.
function bindingProblem(q) {
  if (q.status && q.status !== "PENDING") return t("send.review.problem.status", { status: String(q.status).toLowerCase() });
  const payload = payloadOf(q);
  if (payload === null) return t("send.review.problem.noPayload");
  let p;
  try {
    p = JSON.parse(payload);
  } catch {
    return t("send.review.problem.unreadable");
  }
  const u = p && p.parameters && p.parameters.unsignedTransaction;
  if (!u || typeof u !== "object") return t("send.review.problem.notPayment");
  if (u.quoteId !== q.id) return t("send.review.problem.otherQuote");
  if (u.totalSendingAmount !== q.totalSendingAmount) return t("send.review.problem.otherSendingAmount");
  if (u.totalReceivingAmount !== q.totalReceivingAmount) return t("send.review.problem.otherReceivingAmount");
  const dest = q.destination && q.destination.accountId;
  if ("destinationAccountId" in u && u.destinationAccountId !== dest) return t("send.review.problem.otherAccount");
  if (ctx.request && dest !== ctx.request.accountId) return t("send.review.problem.notChosenAccount");
  const code = (c) => (c && typeof c === "object" ? c.code : c);
  if ("sendingCurrency" in u && code(u.sendingCurrency) !== code(q.sendingCurrency)) return t("send.review.problem.otherSendingCurrency");
  if ("receivingCurrency" in u && code(u.receivingCurrency) !== code(q.receivingCurrency)) return t("send.review.problem.otherReceivingCurrency");
  return "";
}

function payloadOf(q) {
  const list = Array.isArray(q.paymentInstructions) ? q.paymentInstructions : [];
  for (const i of list) {
    const info = i && i.accountOrWalletInfo;
    if (info && info.accountType === "EMBEDDED_WALLET" && typeof info.payloadToSign === "string") return info.payloadToSign;
  }
  return null;
}

function startCountdown() {
  clearInterval(ctx.timer);
  tick();
  ctx.timer = setInterval(tick, 250);
}

function tick() {
  const left = ctx.deadline - performance.now();
  $("quote-expiry").textContent = formatCountdown(left);
  // While a Send is under way the service decides; its answer tells.
  if (left <= 0 && !ctx.sending) markExpired();
}

// markExpired shows that the quote can no longer be sent, and offers a new
// one for the same payment.
function markExpired() {
  clearInterval(ctx.timer);
  ctx.timer = 0;
  ctx.expired = true;
  $("quote-expiry").textContent = formatCountdown(0);
  $("quote-expired").hidden = false;
  $("quote-renew").hidden = false;
  const hadFocus = document.activeElement === $("send-submit");
  updateSendButton();
  if (hadFocus) $("quote-renew").focus();
}

function closeQuote() {
  clearInterval(ctx.timer);
  ctx.timer = 0;
  ctx.quote = null;
  ctx.held = null;
  ctx.expired = false;
  ctx.blocked = "";
  $("quote").hidden = true;
  delete $("quote").dataset.quoteId;
  $("quote-error").hidden = true;
  $("quote-limits-link").hidden = true;
  $("quote-expired").hidden = true;
  if (ctx.step === "review") setStep("amount");
  updateSendButton();
}

// updateSendButton enables Send only when the quote can be sent from this
// tab, and says why not otherwise.
function updateSendButton() {
  let reason = "";
  if (!ctx.key || (!ctx.key() && !ctx.keyPending())) reason = t("send.error.noKey");
  else if (ctx.blocked) reason = ctx.blocked;
  else if (ctx.expired) reason = t("send.review.expired");
  const button = $("send-submit");
  button.disabled = ctx.sending || reason !== "" || !ctx.quote;
  button.title = reason;
  $("send-disabled-reason").textContent = reason;
  $("send-disabled-reason").hidden = reason === "";
}

// onSend stamps the quote's payloadToSign with this tab's key and executes
// it. One click, one Idempotency-Key; the button stays disabled until the
// answer, so one click cannot send twice.
async function onSend() {
  const q = ctx.quote;
  if (!q || ctx.sending || ctx.expired || ctx.blocked) return;
  ctx.sending = true;
  updateSendButton();
  const button = $("send-submit");
  button.setAttribute("aria-busy", "true");
  $("quote-error").hidden = true;
  $("quote-limits-link").hidden = true;
  ctx.setStatus(t("send.status.sending"));
  try {
    const problem = bindingProblem(q);
    if (problem) {
      ctx.blocked = t("send.review.blocked", { problem });
      $("quote-error").textContent = t("send.error.unbound");
      $("quote-error").hidden = false;
      $("quote-renew").hidden = false;
      ctx.setStatus("");
      return;
    }
    // A payment the service holds for the person's confirmation
    // (stepup.js) is confirmed, not executed again.
    if (ctx.held && ctx.held.quoteId === q.id) {
      await confirmHeld(q, ctx.held.challenge);
      return;
    }
    // The final confirmation is the one step that needs the key: if the
    // page was drawn before the module had it, this waits for it.
    const key = ctx.key() || (await ctx.keyReady());
    if (!key) throw new Error(t("send.error.noKey"));
    if (ctx.quote !== q) {
      ctx.setStatus(""); // another quote now: nothing was sent
      return;
    }
    const wallet = await ctx.wallet();
    let stamp;
    try {
      stamp = await wallet.stamp(key.handle, payloadOf(q));
    } catch (err) {
      throw new Error(t("send.error.stamp", { reason: messageOf(err) }));
    }
    const res = await api("POST", "/api/quotes/" + q.id + "/execute", {
      headers: { "Service-Wallet-Signature": stamp, "Idempotency-Key": crypto.randomUUID() },
    });
    if (ctx.quote !== q) return;
    if (res.data && res.data.status === "PENDING_AUTHORIZATION" && res.data.scaChallenge) {
      ctx.held = { quoteId: q.id, challenge: res.data.scaChallenge };
      await confirmHeld(q, res.data.scaChallenge);
      return;
    }
    sent((res.data && res.data.transactionId) || q.transactionId, t("send.status.sent"));
  } catch (err) {
    if (ctx.quote !== q) return;
    sendError(err, q);
  } finally {
    ctx.sending = false;
    button.removeAttribute("aria-busy");
    if (ctx.quote === q && !ctx.expired && ctx.deadline - performance.now() <= 0) markExpired();
    updateSendButton();
  }
}

// confirmHeld asks the person to confirm the held payment q (with their
// passkey, or the e-mailed code) and, confirmed, follows it as sent.
// Cancelled, the payment waits until the quote expires and Send asks again.
async function confirmHeld(q, challenge) {
  ctx.setStatus(t("send.status.confirm"));
  let answer;
  try {
    answer = await confirmStepUp(challenge, {
      authorizePath: "/api/quotes/" + q.id + "/authorize",
      resendPath: "/api/quotes/" + q.id + "/authorize/resend",
      what: t("stepup.what.payment", { amount: formatMoney(q.totalSendingAmount, q.sendingCurrency), payee: $("quote-to").textContent }),
      returnFocus: $("quote-title"),
    });
  } catch (err) {
    if (ctx.quote !== q) return;
    if (err instanceof StepUpCancelled) return quoteProblem(t("send.error.confirmCancelled"));
    if (err instanceof ApiError && err.status === 409) return heldEnded(q);
    // A limit refusal (the day's other payments used it while this one
    // waited) and a lock are the payment's answer: sendError tells them.
    throw err;
  }
  if (ctx.quote !== q) return;
  sent((answer && answer.transactionId) || q.transactionId, t("send.status.sent"));
}

// heldEnded follows a held payment the service no longer waits to confirm
// (409): confirmed meanwhile (another tab, an answer lost on the way), it
// was sent; expired, it was not. The quote says which.
async function heldEnded(q) {
  ctx.held = null;
  let status = "";
  try {
    const res = await api("GET", "/api/quotes/" + q.id);
    status = (res.data && res.data.status) || "";
  } catch {
    // unknown: say so below
  }
  if (ctx.quote !== q) return;
  if (status === "EXPIRED") {
    markExpired();
    return quoteProblem(t("send.error.confirmExpired"));
  }
  if (status && status !== "PENDING" && status !== "PENDING_AUTHORIZATION") return sent(q.transactionId, t("send.status.alreadySent"));
  quoteProblem(t("send.error.confirmUnknown"));
}

// sent leaves the quote for the transaction it became.
function sent(transactionId, status) {
  closeQuote();
  $("send-amount").value = "";
  $("send-note").value = "";
  ctx.request = null;
  ctx.setStatus(status);
  refreshBalance();
  reloadTransactions();
  setStep("result");
  // The result is the payment's own view, which follows it live.
  if (typeof transactionId === "string" && transactionId) navigate(paths.payment(transactionId), { state: { sent: true } });
}



function sendError(err, q) {
  if (err instanceof ApiError) {
    const d = err.details || {};
    if (LIMIT_CODES.has(err.code)) {
      quoteProblem(limitText(err));
      $("quote-limits-link").hidden = false;
      return;
    }
    if (err.status === 409 && err.code === "INVALID_STATE_TRANSITION") {
      if (d.quoteStatus === "EXPIRED") {
        ctx.setStatus(t("send.status.expired"));
        return markExpired();
      }
      // Sent already (a click in another tab, or an answer that was lost).
      return sent(q.transactionId, t("send.status.alreadySent"));
    }
    if (err.status === 423 && d.lockedUntil) {
      return quoteProblem(t("stepup.locked", { time: formatTime(d.lockedUntil) }));
    }
    if (err.code === "INSUFFICIENT_BALANCE") {
      refreshBalance();
      const c = q.sendingCurrency || {};
      return quoteProblem(Number.isFinite(d.available) && Number.isFinite(d.required)
        ? t("send.error.insufficientAmounts", { available: formatMoney(d.available, c), required: formatMoney(d.required, c) })
        : t("send.error.insufficient"));
    }
    if (err.status === 401 && (err.code === "UNAUTHORIZED" || err.code === "HTTP_401")) return; // signed out
    if (err.status === 401) {
      return quoteProblem(t("send.error.signatureRefused"));
    }
    if (err.status === 404) {
      ctx.blocked = t("send.review.gone");
      $("quote-renew").hidden = false;
      return quoteProblem(t("send.error.gone"));
    }
    if (err.status === 0 || err.status >= 500) {
      return quoteProblem(t("send.error.unreachable"));
    }
  }
  quoteProblem(t("send.error.notSent", { reason: messageOf(err) }));
}

function quoteProblem(text) {
  ctx.setStatus("");
  $("quote-limits-link").hidden = true;
  $("quote-error").textContent = text;
  $("quote-error").hidden = false;
}

// ---- errors -------------------------------------------------------------------

function clearErrors() {
  for (const f of ["account", "amount", "note"]) fieldError(f, "");
  $("send-form-error").hidden = true;
  $("send-form-error").textContent = "";
  $("send-limits-link").hidden = true;
}

// fieldError shows text under the input of field ("account", "amount",
// "note"), or clears it when text is "".
function fieldError(field, text) {
  const el = $("send-" + field + "-error");
  const input = $("send-" + field);
  el.textContent = text;
  el.hidden = text === "";
  if (text) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  } else {
    input.removeAttribute("aria-invalid");
  }
}

function formError(text) {
  $("send-form-error").textContent = text;
  $("send-form-error").hidden = false;
}

function codeOf(currency) {
  return currency && typeof currency === "object" ? String(currency.code || "") : String(currency || "");
}

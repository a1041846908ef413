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

import { api, ApiError, messageOf } from "./api.js";
import { accountLabel } from "./accounts.js";
import { availableAmount, refreshBalance, walletCurrency } from "./balance.js";
import { formatAmount, formatCountdown, formatRate, parseAmount } from "./format.js";
import { railName, reloadTransactions } from "./transactions.js";
import { navigate, paths } from "./router.js";

const $ = (id) => document.getElementById(id);

const STATUS_TEXT = { PENDING: "pending", UNDER_REVIEW: "under review", INACTIVE: "inactive" };

const NO_KEY = "Sending needs your signing key, which this tab does not have. " +
  "Reload the page; if it still cannot send, sign out and sign in again.";
const UNBOUND = "This quote cannot be signed: what the wallet would sign does not match the payment shown. " +
  "Nothing was sent. Get a new quote.";

const ctx = {
  wallet: null, // () => Promise<paywallet>
  key: null, // () => {handle, publicKey, sessionId} | null
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
  quoting: 0, // generation of the quote being asked for
  step: "recipient", // the step shown: recipient, amount, review
};

const STEPS = ["recipient", "amount", "review", "result"];

/**
 * Wires the section once.
 *
 * @param {{wallet: () => Promise<object>, key: () => object|null, setStatus: (text: string) => void}} options
 */
export function initSend({ wallet, key, setStatus }) {
  ctx.wallet = wallet;
  ctx.key = key;
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
export function enterSend() {
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
  if (!account || account.status !== "ACTIVE") return fieldError("account", "Choose who you are paying.");
  $("send-to").textContent = accountLabel(account) + " (" + (account.currency || "") + ")";
  renderAvailable();
  setStep("amount", { focus: true });
}

// renderAvailable says how much can be sent, under the amount.
function renderAvailable() {
  const currency = walletCurrency();
  const available = availableAmount();
  const el = $("send-available");
  el.textContent = currency && Number.isFinite(available) ? "You have " + formatAmount(available, currency) + " available." : "";
  el.hidden = el.textContent === "";
}

/** Shows the section (again): the key may have come or gone since. */
export function showSend() {
  $("send").hidden = false;
  renderAccounts();
  renderAvailable();
  updateSendButton();
}

/** Hides the section and forgets what it held (another person may sign in). */
export function hideSend() {
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
  const options = [new Option(active.length ? "Choose an account" : "No account can receive money yet", "")];
  for (const a of active) options.push(new Option(accountLabel(a) + " (" + (a.currency || "") + ")", a.id));
  for (const a of others) {
    const o = new Option(accountLabel(a) + " (" + (a.currency || "") + ") — " + (STATUS_TEXT[a.status] || String(a.status || "").toLowerCase()), a.id);
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
  if (ctx.accounts.length === 0) hint = "Add the account you want to pay under Recipients; you can send to it once it is active.";
  else if (active.length === 0) hint = "Your recipients cannot receive money until they are active. New ones are checked first, which takes a moment.";
  else if (others.length > 0) hint = "Recipients that are not active are listed but cannot be chosen.";
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
  const info = await ratesFor(account.currency);
  if (selectedAccount() !== account) return;
  renderSide();
  if (!info || !info.rows.length) return;
  const row = info.rows[0];
  const from = walletCurrency() || (typeof row.sourceCurrency === "object" ? row.sourceCurrency : null);
  const parts = [];
  if (from && info.currency && from.code !== info.currency.code) {
    const rate = formatRate(row.exchangeRate, info.currency, from);
    if (rate) parts.push("Indicative rate: " + rate + ".");
  }
  const mins = info.rows.map((r) => r.minSendingAmount).filter(Number.isFinite);
  const maxes = info.rows.map((r) => r.maxSendingAmount).filter(Number.isFinite);
  if (from && mins.length && maxes.length) {
    parts.push("You can send from " + formatAmount(Math.min(...mins), from) + " to " + formatAmount(Math.max(...maxes), from) + ".");
  }
  hint.textContent = parts.join(" ");
  hint.hidden = parts.length === 0;
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
  $("send-side-sending-label").textContent = "You send" + (from ? " (" + from.code + ")" : "");
  $("send-side-receiving-label").textContent = "They receive" + (to ? " (" + to + ")" : "");
  const code = side() === "RECEIVING" ? to : from ? from.code : "";
  $("send-amount-label").textContent = code ? "Amount in " + code : "Amount";
}

async function onQuote(event) {
  event.preventDefault();
  clearErrors();
  const account = selectedAccount();
  if (!account || account.status !== "ACTIVE") return fieldError("account", "Choose the account to send to.");
  const locked = side();
  let currency;
  let info = null;
  if (locked === "SENDING") {
    currency = walletCurrency();
    if (!currency) return formError("Your wallet's currency is not known yet. Try again in a moment.");
  } else {
    info = await ratesFor(account.currency);
    currency = info && info.currency;
    if (!currency) {
      return fieldError("amount", "The decimals of " + account.currency + " are not known right now: enter what you send instead.");
    }
  }
  const parsed = parseAmount($("send-amount").value, currency.decimals);
  if (!parsed.ok) return fieldError("amount", parsed.message);
  const over = overBalance(locked, parsed.amount, info);
  if (over) return fieldError("amount", over);
  const note = $("send-note").value.trim();
  if ([...note].length > 255) return fieldError("note", "Keep the note to 255 characters.");
  if (/[\u0000-\u001f\u007f]/.test(note)) return fieldError("note", "The note must be one line of plain text.");

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
  const have = "You have " + formatAmount(available, from) + " available";
  if (locked === "SENDING") {
    return amount > available ? have + ". Enter at most that, or add money to your wallet first." : "";
  }
  const row = info && info.rows[0];
  if (!row || !info.currency || !(row.exchangeRate > 0)) return "";
  // exchangeRate is sending units per receiving unit.
  const estimate = Math.ceil((amount / 10 ** info.currency.decimals) * row.exchangeRate * 10 ** from.decimals);
  return estimate > available
    ? have + ", and this would cost about " + formatAmount(estimate, from) + ". Enter a smaller amount."
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
  ctx.setStatus("Getting a quote…");
  const started = performance.now();
  try {
    const res = await api("POST", "/api/quotes", { body: request.body });
    if (generation !== ctx.quoting) return;
    if (!res.data || typeof res.data.id !== "string") throw new Error("unexpected answer " + res.status + " to the quote");
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
  if (!(err instanceof ApiError)) return formError("Could not get a quote: " + messageOf(err));
  if (err.code === "AMOUNT_OUT_OF_RANGE") {
    const d = err.details || {};
    const from = walletCurrency() || {};
    if (Number.isFinite(d.minSendingAmount) && Number.isFinite(d.maxSendingAmount)) {
      return fieldError("amount", "What you send must be from " + formatAmount(d.minSendingAmount, from) + " to " +
        formatAmount(d.maxSendingAmount, from) + " for this account.");
    }
    return fieldError("amount", "This amount cannot be sent to this account.");
  }
  if (err.code === "INVALID_CURRENCY") return formError("No exchange rate is offered to this account's currency right now.");
  const fields = err.fieldErrors();
  let shown = false;
  for (const [field, message] of Object.entries(fields)) {
    const where = field.startsWith("destination") ? "account" : field === "lockedCurrencyAmount" ? "amount" : field === "description" ? "note" : "";
    if (where && $("send-" + where + "-error").hidden) {
      const what = where === "account" ? "This account " : where === "amount" ? "The amount " : "The note ";
      fieldError(where, what + message.replace(/\.$/, "") + ".");
      shown = true;
    }
  }
  if (!shown) formError("Could not get a quote: " + messageOf(err));
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
  $("quote-send").textContent = formatAmount(q.totalSendingAmount, send);
  $("quote-fees").textContent = formatAmount(q.feesIncluded, send);
  $("quote-receive").textContent = formatAmount(q.totalReceivingAmount, receive);
  const rate = formatRate(q.exchangeRate, receive, send);
  const inverse = q.exchangeRate > 0 ? formatRate(1 / q.exchangeRate, send, receive) : "";
  $("quote-rate").textContent = rate;
  $("quote-rate-inverse").textContent = inverse && send.code !== receive.code ? "(" + inverse + ")" : "";
  const rail = q.destination && q.destination.paymentRail;
  $("quote-rail").textContent = rail ? railName(rail) : "";
  $("quote-rail-row").hidden = !rail;
  $("quote-note").textContent = q.description || "";
  $("quote-note-row").hidden = !q.description;
  $("quote-expiry").dateTime = typeof q.expiresAt === "string" ? q.expiresAt : "";
  $("quote-id").textContent = q.id;

  const problem = bindingProblem(q);
  ctx.blocked = problem ? "This quote cannot be signed: " + problem + "." : "";
  $("quote-error").textContent = problem ? UNBOUND : "";
  $("quote-error").hidden = !problem;
  $("quote-expired").hidden = true;
  $("quote-renew").hidden = !problem;
  setStep("review");
  $("quote").hidden = false;
  $("quote").dataset.quoteId = q.id;
  updateSendButton();
  startCountdown();
  ctx.setStatus(problem ? "The quote cannot be signed." : "Check the quote, then send.");
  $("quote-title").focus();
}

// bindingProblem checks that payloadToSign is about exactly the quote shown:
// its unsignedTransaction names this quote, its two amounts and (when it
// says) its destination and currencies. "" when it is, a reason when not.
function bindingProblem(q) {
  if (q.status && q.status !== "PENDING") return "the quote is " + String(q.status).toLowerCase();
  const payload = payloadOf(q);
  if (payload === null) return "the quote has nothing for the wallet to sign";
  let p;
  try {
    p = JSON.parse(payload);
  } catch {
    return "what the wallet would sign is not readable";
  }
  const u = p && p.parameters && p.parameters.unsignedTransaction;
  if (!u || typeof u !== "object") return "what the wallet would sign is not a payment";
  if (u.quoteId !== q.id) return "it is for another quote";
  if (u.totalSendingAmount !== q.totalSendingAmount) return "it sends another amount";
  if (u.totalReceivingAmount !== q.totalReceivingAmount) return "it delivers another amount";
  const dest = q.destination && q.destination.accountId;
  if ("destinationAccountId" in u && u.destinationAccountId !== dest) return "it pays another account";
  if (ctx.request && dest !== ctx.request.accountId) return "the quote pays another account than the one chosen";
  const code = (c) => (c && typeof c === "object" ? c.code : c);
  if ("sendingCurrency" in u && code(u.sendingCurrency) !== code(q.sendingCurrency)) return "it sends another currency";
  if ("receivingCurrency" in u && code(u.receivingCurrency) !== code(q.receivingCurrency)) return "it delivers another currency";
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
  ctx.expired = false;
  ctx.blocked = "";
  $("quote").hidden = true;
  delete $("quote").dataset.quoteId;
  $("quote-error").hidden = true;
  $("quote-expired").hidden = true;
  if (ctx.step === "review") setStep("amount");
  updateSendButton();
}

// updateSendButton enables Send only when the quote can be sent from this
// tab, and says why not otherwise.
function updateSendButton() {
  let reason = "";
  if (!ctx.key || !ctx.key()) reason = NO_KEY;
  else if (ctx.blocked) reason = ctx.blocked;
  else if (ctx.expired) reason = "The quote expired. Get a new quote to send.";
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
  ctx.setStatus("Sending…");
  try {
    const problem = bindingProblem(q);
    if (problem) {
      ctx.blocked = "This quote cannot be signed: " + problem + ".";
      $("quote-error").textContent = UNBOUND;
      $("quote-error").hidden = false;
      $("quote-renew").hidden = false;
      ctx.setStatus("");
      return;
    }
    const key = ctx.key();
    if (!key) throw new Error(NO_KEY);
    const wallet = await ctx.wallet();
    let stamp;
    try {
      stamp = await wallet.stamp(key.handle, payloadOf(q));
    } catch (err) {
      throw new Error("The wallet could not sign the payment: " + messageOf(err));
    }
    const res = await api("POST", "/api/quotes/" + q.id + "/execute", {
      headers: { "Service-Wallet-Signature": stamp, "Idempotency-Key": crypto.randomUUID() },
    });
    if (ctx.quote !== q) return;
    sent((res.data && res.data.transactionId) || q.transactionId, "The payment is on its way.");
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
    if (err.status === 409 && err.code === "INVALID_STATE_TRANSITION") {
      if (d.quoteStatus === "EXPIRED") {
        ctx.setStatus("The quote expired.");
        return markExpired();
      }
      // Sent already (a click in another tab, or an answer that was lost).
      return sent(q.transactionId, "This quote was already sent.");
    }
    if (err.code === "INSUFFICIENT_BALANCE") {
      refreshBalance();
      const c = q.sendingCurrency || {};
      const detail = Number.isFinite(d.available) && Number.isFinite(d.required)
        ? " You have " + formatAmount(d.available, c) + " available; this payment needs " + formatAmount(d.required, c) + "."
        : "";
      return quoteProblem("Your available balance does not cover this payment." + detail);
    }
    if (err.status === 401 && (err.code === "UNAUTHORIZED" || err.code === "HTTP_401")) return; // signed out
    if (err.status === 401) {
      return quoteProblem("The wallet's signature was not accepted: this tab's key no longer belongs to your session. " +
        "Sign out and sign in again here, then send.");
    }
    if (err.status === 404) {
      ctx.blocked = "This quote is no longer available.";
      $("quote-renew").hidden = false;
      return quoteProblem("This quote is no longer available. Get a new quote.");
    }
    if (err.status === 0 || err.status >= 500) {
      return quoteProblem("The service could not be reached, so the payment may not have gone out. " +
        "Press Send again: a quote is never paid twice.");
    }
  }
  quoteProblem("The payment was not sent: " + messageOf(err));
}

function quoteProblem(text) {
  ctx.setStatus("");
  $("quote-error").textContent = text;
  $("quote-error").hidden = false;
}

// ---- errors -------------------------------------------------------------------

function clearErrors() {
  for (const f of ["account", "amount", "note"]) fieldError(f, "");
  $("send-form-error").hidden = true;
  $("send-form-error").textContent = "";
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

// Activity: the wallet's history (GET /api/transactions, newest first,
// "Load more" with nextCursor, filtered by status), its last few entries on
// Home, the view of one transaction (GET /api/transactions/{id}, at
// /activity/{id}) and its receipt (/activity/{id}/receipt).
//
// A transaction view follows a payment on its way: it asks for it again
// about every second, then less often, until the status is final
// (COMPLETED, FAILED, REJECTED, REFUNDED, EXPIRED), and then refreshes the
// balance and the list. A failure is told in plain words by its
// failureReason.
//
// While the event stream carries the service's webhooks (events.js, wired
// by money.js), neither the view nor the list asks again by itself: an
// event about a payment makes the view ask for it at once (even after a
// final status: a completed payment can still come back, REFUNDED) and the
// list load again. While the stream is down, they poll as described above.
//
// The wallet is the platform's receipt channel: once the view shows a final
// receipt (COMPLETED, REFUNDED, FAILED or REJECTED) to the person, with the
// tab in view, it confirms the delivery once (POST
// /api/transactions/{id}/confirm) and shows "Receipt delivered <time>".
//
// Quotes that were never sent also have a transaction (PENDING, then
// EXPIRED); the list leaves them out: no money moved.

import { api, ApiError, messageOf } from "./api.js";
import { accountLabel, holderName } from "./recipients.js";
import { heldAmount, refreshBalance } from "./balance.js";
import { formatExchangeRate, formatMoney, formatTime } from "./format.js";
import { t } from "./i18n.js";
import { paths } from "./router.js";

const $ = (id) => document.getElementById(id);

const FINAL = new Set(["COMPLETED", "FAILED", "REJECTED", "REFUNDED", "EXPIRED"]);
const RECEIPT = new Set(["COMPLETED", "REFUNDED", "FAILED", "REJECTED"]);

// status → [key of the badge text, badge class]
export const STATUS = {
  CREATED: ["activity.status.created", "pending"],
  PENDING: ["activity.status.pending", "pending"],
  PENDING_AUTHORIZATION: ["activity.status.pendingAuthorization", "pending"],
  PROCESSING: ["activity.status.processing", "processing"],
  COMPLETED: ["activity.status.completed", "completed"],
  FAILED: ["activity.status.failed", "failed"],
  REJECTED: ["activity.status.rejected", "failed"],
  REFUNDED: ["activity.status.refunded", "refunded"],
  EXPIRED: ["activity.status.expired", "expired"],
};

// Rails' names: a proper name as it is, a description from the catalogue.
const RAILS = {
  ACH: "ACH",
  ACH_COLOMBIA: "ACH Colombia",
  BANK_TRANSFER: () => t("payment.rail.bankTransfer"),
  BRE_B: "Bre-B",
  CIPS: "CIPS",
  FAST: "FAST",
  FASTER_PAYMENTS: "Faster Payments",
  FEDNOW: "FedNow",
  INSTAPAY: "InstaPay",
  MOBILE_MONEY: () => t("payment.rail.mobileMoney"),
  NEFT: "NEFT",
  PAYNOW: "PayNow",
  PESONET: "PESONet",
  PIX: "Pix",
  RTGS: "RTGS",
  RTP: () => t("payment.rail.rtp"),
  SEPA: "SEPA",
  SEPA_INSTANT: "SEPA Instant",
  SPEI: "SPEI",
  SWIFT: "SWIFT",
  UNIONPAY: "UnionPay",
  UPI: "UPI",
  WIRE: () => t("payment.rail.wire"),
};

// The list asks again while a payment in it is on its way (ms, the last repeating).
const LIST_DELAYS = [3000, 5000, 10000, 15000];
// A followed transaction is asked for again after these delays (ms).
const FOLLOW_FIRST_MS = 1000;
const FOLLOW_MAX_MS = 5000;
const PAGE = 20;
// Home shows this many of the newest entries.
const RECENT = 4;
// Statuses in which an outgoing payment's money came back (or is coming back).
export const MONEY_BACK = new Set(["FAILED", "REJECTED", "REFUNDED"]);

const ctx = {
  setStatus: () => {},
  shown: false,
  accounts: new Map(), // ExternalAccount id → account
  // the list
  items: [], // transactions loaded, in order
  cursor: "", // nextCursor of the last page, "" when there is no more
  pages: 0,
  loading: 0, // generation of the list being loaded
  watchTimer: 0,
  watchDelay: 0,
  more: false, // "Load more" is under way
  // the transaction view
  view: { id: "", tx: null, generation: 0, timer: 0, delay: 0, held: null, sent: false, asking: 0, again: false },
  filter: "", // the status the list shows, "" for every one
  recent: [], // the newest entries, unfiltered, for Home
  namesChanged: [], // called when the names of the accounts changed (onNamesChanged)
  live: false, // the event stream carries the service's webhooks: no polling
  confirming: new Set(), // ids whose receipt confirmation was sent from this page
};

/**
 * Wires the list and the view once.
 *
 * @param {{setStatus: (text: string) => void}} options
 */
export function initTransactions({ setStatus }) {
  ctx.setStatus = setStatus;
  $("transactions-refresh").addEventListener("click", () => reloadTransactions());
  $("transactions-more").addEventListener("click", onMore);
  $("transactions-filter").addEventListener("change", () => {
    ctx.filter = $("transactions-filter").value;
    reloadTransactions();
  });
  document.addEventListener("wallet:accounts", (event) => {
    const labels = (accounts) => [...accounts.values()].map((a) => a.id + "\t" + accountLabel(a)).join("\n");
    const before = labels(ctx.accounts);
    ctx.accounts = new Map((event.detail.accounts || []).filter((a) => a && a.id).map((a) => [a.id, a]));
    if (labels(ctx.accounts) === before) return; // the names shown did not change
    if (ctx.shown) renderList();
    if (ctx.view.tx) renderView(ctx.view.tx);
    for (const fn of ctx.namesChanged) fn();
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && ctx.view.tx) confirmReceipt(ctx.view.tx, ctx.view.generation);
  });
}

/** Shows the list and (re)loads its first page, unless more pages were asked for. */
export function showTransactions() {
  $("transactions").hidden = false;
  if (!ctx.shown || ctx.pages <= 1) {
    ctx.shown = true;
    reloadTransactions();
  }
}

/** Hides the list and the view and forgets them (another person may sign in). */
export function hideTransactions() {
  ctx.shown = false;
  ctx.loading++;
  stopWatching();
  ctx.more = false;
  ctx.items = [];
  ctx.cursor = "";
  ctx.pages = 0;
  ctx.accounts = new Map();
  ctx.filter = "";
  ctx.recent = [];
  $("transactions-filter").value = "";
  $("transactions").hidden = true;
  $("transactions-list").replaceChildren();
  $("recent-list").replaceChildren();
  $("recent-empty").hidden = true;
  $("transactions-empty").hidden = true;
  $("transactions-more").hidden = true;
  showListError("");
  closeTransaction();
}

/**
 * A payment changed (an event of the stream; null when events may have
 * been missed): the open view asks for its transaction at once. (The
 * caller loads the list again.)
 *
 * @param {object|null} tx the transaction the event carried
 */
export function transactionChanged(tx) {
  const view = ctx.view;
  if (view.id && (!tx || tx.id === view.id)) {
    clearTimeout(view.timer);
    view.timer = 0;
    follow(view.generation);
  }
}

/**
 * Says whether the event stream carries the service's webhooks. While it
 * does, the view and the list do not poll; when it stops, they start again.
 *
 * @param {boolean} live
 */
export function setTransactionsLive(live) {
  ctx.live = !!live;
  if (ctx.live) return;
  const view = ctx.view;
  if (view.id && !view.timer && view.asking !== view.generation && !(view.tx && FINAL.has(view.tx.status))) {
    follow(view.generation);
  }
  if (!ctx.watchTimer) watch();
}

/** Calls fn whenever the names of the accounts that payments name change. */
export function onNamesChanged(fn) {
  ctx.namesChanged.push(fn);
}

/** Loads the first page of the list again (after a payment or a funding). */
export async function reloadTransactions() {
  if (!ctx.shown) return;
  await loadPage("");
}

// ---- the list -----------------------------------------------------------------

async function loadPage(cursor) {
  const generation = ++ctx.loading;
  const more = $("transactions-more");
  more.disabled = true;
  if (cursor) ctx.more = true;
  try {
    const items = [];
    let next = cursor;
    let pages = 0;
    // Quotes never sent are left out; keep going while a page showed nothing.
    do {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (next) q.set("cursor", next);
      if (ctx.filter) q.set("status", ctx.filter);
      const { data } = await api("GET", "/api/transactions?" + q);
      if (generation !== ctx.loading) return;
      const page = data && Array.isArray(data.data) ? data.data : [];
      items.push(...page);
      pages++;
      next = data && data.hasMore && typeof data.nextCursor === "string" ? data.nextCursor : "";
    } while (next && pages < 5 && !items.some(listed));
    const before = new Map(ctx.items.map((x) => [x.id, x.status]));
    ctx.items = cursor ? ctx.items.concat(items) : items;
    ctx.pages = cursor ? ctx.pages + pages : pages;
    ctx.cursor = next;
    if (!cursor && !ctx.filter) ctx.recent = items.filter(listed).slice(0, RECENT);
    showListError("");
    renderList();
    if (!cursor && ctx.filter) loadRecent(generation);
    // A payment of the list reached its end meanwhile: the balance moved.
    if (!cursor && items.some((x) => FINAL.has(x.status) && before.has(x.id) && !FINAL.has(before.get(x.id)))) {
      refreshBalance();
    }
    watch();
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    showListError(t("activity.error.load", { reason: messageOf(err) }));
  } finally {
    if (cursor) ctx.more = false;
    if (generation === ctx.loading) more.disabled = false;
  }
}

// loadRecent reads the newest entries for Home while the list shows only
// one status.
async function loadRecent(generation) {
  try {
    const { data } = await api("GET", "/api/transactions?" + new URLSearchParams({ limit: String(PAGE) }));
    if (generation !== ctx.loading) return;
    ctx.recent = (data && Array.isArray(data.data) ? data.data : []).filter(listed).slice(0, RECENT);
    renderRecent();
  } catch {
    // Home keeps what it showed; the next load tries again.
  }
}

function onMore() {
  if (ctx.cursor) loadPage(ctx.cursor);
}

// watch asks for the first page again while a payment in it is on its
// way, so that its status (and the balance) follow without a click. Not
// once more pages were loaded: that would fold them away.
function watch() {
  clearTimeout(ctx.watchTimer);
  ctx.watchTimer = 0;
  const moving = ctx.items.some((x) => x.status === "PROCESSING" || x.status === "CREATED" || x.status === "PENDING_AUTHORIZATION");
  if (!ctx.shown || !moving || ctx.pages > 1 || ctx.live) {
    ctx.watchDelay = 0;
    return;
  }
  const i = LIST_DELAYS.indexOf(ctx.watchDelay);
  ctx.watchDelay = LIST_DELAYS[Math.min(i + 1, LIST_DELAYS.length - 1)];
  ctx.watchTimer = setTimeout(() => {
    ctx.watchTimer = 0;
    if (ctx.more) watch(); // not over a "Load more": look again later
    else if (ctx.shown && ctx.pages <= 1) loadPage("");
  }, ctx.watchDelay);
}

function stopWatching() {
  clearTimeout(ctx.watchTimer);
  ctx.watchTimer = 0;
  ctx.watchDelay = 0;
}

// listed: the list shows every transaction but quotes that were never sent.
function listed(x) {
  return !(x && x.type === "OUTGOING" && (x.status === "PENDING" || x.status === "EXPIRED"));
}

function renderList() {
  const shown = ctx.items.filter(listed);
  const list = $("transactions-list");
  // The list is drawn again as payments move: keep the keyboard focus on
  // the row it was on.
  const focused = list.contains(document.activeElement) && document.activeElement.dataset ? document.activeElement.dataset.open : "";
  list.replaceChildren(...shown.map(listItem));
  if (focused) {
    const again = list.querySelector('a[data-open="' + CSS.escape(focused) + '"]');
    if (again) again.focus({ preventScroll: true });
  }
  $("transactions-empty").textContent = t(ctx.filter ? "activity.list.emptyFiltered" : "activity.list.empty");
  $("transactions-empty").hidden = shown.length > 0 || !!ctx.cursor;
  $("transactions-more").hidden = !ctx.cursor;
  renderRecent();
}

// renderRecent draws Home's last entries.
function renderRecent() {
  const list = $("recent-list");
  const focused = list.contains(document.activeElement) && document.activeElement.dataset ? document.activeElement.dataset.open : "";
  list.replaceChildren(...ctx.recent.map((x) => listItem(x, { compact: true })));
  if (focused) {
    const again = list.querySelector('a[data-open="' + CSS.escape(focused) + '"]');
    if (again) again.focus({ preventScroll: true });
  }
  $("recent-empty").hidden = ctx.recent.length > 0 || !ctx.shown;
}

// listItem is one row: a link to the payment's view with its time, what it
// was, the amount and the status. compact (Home) names the recipient only
// and leaves out the lines under it, so that Home fits a phone's screen.
function listItem(x, { compact = false } = {}) {
  const li = document.createElement("li");
  li.className = "tx";
  li.dataset.id = String(x.id || "");
  li.dataset.status = String(x.status || "");
  li.dataset.type = String(x.type || "");

  // A link to the payment's own address: it opens in place, in a new tab,
  // and can be copied.
  const button = document.createElement("a");
  button.className = "tx-open";
  button.href = paths.payment(li.dataset.id);
  button.dataset.open = li.dataset.id;

  const when = document.createElement("time");
  when.className = "tx-when";
  when.dateTime = typeof x.createdAt === "string" ? x.createdAt : "";
  when.textContent = formatTime(x.createdAt);

  const what = document.createElement("span");
  what.className = "tx-what";
  const direction = document.createElement("span");
  direction.className = "tx-direction";
  direction.textContent = directionText(x);
  what.append(direction);
  const other = counterparty(x, compact);
  if (other) {
    const party = document.createElement("span");
    party.className = "tx-party";
    party.textContent = other;
    what.append(" ", party);
  }

  const amount = document.createElement("span");
  amount.className = "tx-amount";
  amount.textContent = signedAmount(x);
  const back = x.type === "OUTGOING" && MONEY_BACK.has(x.status);
  if (back) amount.classList.add("tx-amount-back");

  button.append(when, what, amount, badge(x.status));
  // A payment that did not arrive reads as money coming back, not as money lost.
  if (back && !compact) {
    const note = document.createElement("span");
    note.className = "tx-received tx-back";
    note.textContent = t(x.status === "REFUNDED" ? "activity.item.returned" : "activity.item.notDelivered");
    button.append(note);
  }
  // What arrives, while it is on its way and once it did.
  if (!compact && x.type === "OUTGOING" && x.receivedAmount && (x.status === "PROCESSING" || x.status === "COMPLETED")) {
    const received = document.createElement("span");
    received.className = "tx-received";
    received.textContent = t(x.status === "COMPLETED" ? "activity.item.received" : "activity.item.receiving", {
      amount: formatMoney(x.receivedAmount.amount, x.receivedAmount.currency || {}),
    });
    button.append(received);
  }
  li.append(button);
  return li;
}

function directionText(x) {
  return t(x.type === "OUTGOING" ? "activity.item.sent" : "activity.item.added");
}

function counterparty(x, short = false) {
  if (x.type === "OUTGOING") return t("activity.item.to", { name: destinationName(x, short) });
  return typeof x.description === "string" ? x.description : "";
}

// destinationName names the account paid; short: the holder's name alone
// when it is known.
export function destinationName(x, short = false) {
  const id = x && x.destination && typeof x.destination.accountId === "string" ? x.destination.accountId : "";
  const account = ctx.accounts.get(id);
  if (account) return (short && holderName(account)) || accountLabel(account);
  return id ? t("payment.account.short", { end: id.slice(-6) }) : t("payment.account.unknown");
}

// signedAmount is what the transaction did to the wallet, with the sign
// where the person's locale puts it: "-$10.25" for a payment (what left the
// wallet), "+$100.00" for money added; a payment whose money came back has
// no sign.
function signedAmount(x) {
  if (x.type === "OUTGOING") {
    const a = x.sentAmount || x.receivedAmount || {};
    if (MONEY_BACK.has(x.status)) return formatMoney(a.amount, a.currency || {});
    return formatMoney(Number.isFinite(a.amount) ? -a.amount : a.amount, a.currency || {}, { signDisplay: "exceptZero" });
  }
  const a = x.receivedAmount || {};
  return formatMoney(a.amount, a.currency || {}, { signDisplay: "exceptZero" });
}

function badge(status) {
  const el = document.createElement("span");
  const [key, kind] = STATUS[status] || ["", "pending"];
  el.className = "badge badge-" + kind;
  el.textContent = key ? t(key) : humanize(status) || t("activity.status.unknown");
  return el;
}

function showListError(text) {
  $("transactions-error").textContent = text;
  $("transactions-error").hidden = text === "";
}

// ---- one transaction ------------------------------------------------------------

/**
 * Opens the view of a transaction and follows it until its status is final.
 *
 * @param {string} id a Transaction id
 * @param {{initial?: object, focus?: boolean, sent?: boolean}} [options]
 *   initial: what is already known of it; focus: move the focus to the view
 *   (default true); sent: it was just sent from this page, so reaching a
 *   final status (even at the first look) moves the balance and the list
 */
export function openTransaction(id, { initial = null, focus = true, sent = false } = {}) {
  const view = ctx.view;
  clearTimeout(view.timer);
  view.generation++;
  view.id = String(id || "");
  view.tx = null;
  view.held = null;
  view.delay = 0;
  view.sent = sent;
  $("transaction").hidden = false;
  $("tx-receipt-link").href = paths.receipt(view.id);
  $("tx-receipt-link").hidden = true;
  $("tx-send-again").hidden = !sent;
  $("tx-error").hidden = true;
  $("tx-receipt").hidden = true;
  $("tx-reason").hidden = true;
  $("tx-facts").replaceChildren();
  delete $("transaction").dataset.status;
  $("tx-title").textContent = t(sent ? "payment.title.sent" : "payment.title.payment");
  $("tx-badge").replaceChildren();
  $("tx-status-text").textContent = t("payment.loading");
  if (initial && initial.id === view.id) show(initial, view.generation);
  if (focus) $("tx-title").focus({ preventScroll: true });
  follow(view.generation);
}

/** Closes the view and stops following its transaction. */
export function closeTransaction() {
  const view = ctx.view;
  clearTimeout(view.timer);
  view.generation++;
  view.id = "";
  view.tx = null;
  $("transaction").hidden = true;
}

// follow asks for the transaction, shows it, and asks again later until
// its status is final: after 1 s, then each time half as long again, at
// most every 5 s (not while the event stream is live). A network failure
// is retried the same way. One question at a time: a call while one is
// under way makes it ask once more when it is answered.
async function follow(generation) {
  const view = ctx.view;
  if (view.asking === generation) {
    view.again = true;
    return;
  }
  view.asking = generation;
  view.again = false;
  try {
    const { data } = await api("GET", "/api/transactions/" + view.id);
    if (generation !== view.generation) return;
    $("tx-error").hidden = true;
    show(data, generation);
  } catch (err) {
    if (generation !== view.generation) return;
    if (err instanceof ApiError && err.status === 401) return;
    if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
      if (!view.tx) $("tx-status-text").textContent = "";
      return viewError(t("payment.error.notFound"));
    }
    viewError(t("payment.error.check", { reason: messageOf(err) }));
  } finally {
    if (view.asking === generation) view.asking = 0;
  }
  if (generation !== view.generation) return;
  if (view.again) return follow(generation);
  if ((view.tx && FINAL.has(view.tx.status)) || ctx.live) return;
  view.delay = view.delay ? Math.min(FOLLOW_MAX_MS, Math.round(view.delay * 1.5)) : FOLLOW_FIRST_MS;
  view.timer = setTimeout(() => follow(generation), view.delay);
}

// show renders a newer state of the followed transaction, and acts on a
// change of status: a final one moves the balance and the list.
function show(tx, generation) {
  const view = ctx.view;
  if (!tx || typeof tx !== "object" || tx.id !== view.id) return;
  const before = view.tx ? view.tx.status : "";
  view.tx = tx;
  renderView(tx);
  if ((before && before !== tx.status) || (!before && view.sent)) {
    if (before) ctx.setStatus(statusSentence(tx));
    if (FINAL.has(tx.status)) {
      reloadTransactions();
      refreshBalance().then(() => explainFailure(tx, generation));
    }
  } else if (!before && FINAL.has(tx.status)) {
    explainFailure(tx, generation);
  }
  confirmReceipt(tx, generation);
}

function renderView(tx) {
  const outgoing = tx.type === "OUTGOING";
  $("tx-title").textContent = t(!outgoing ? "payment.title.added" : ctx.view.sent ? "payment.title.sent" : "payment.title.payment");
  $("tx-receipt-link").hidden = !RECEIPT.has(tx.status) && tx.status !== "PROCESSING";
  // The status line is a live region: it changes only when the status does,
  // so that a screen reader hears each new status once.
  if ($("transaction").dataset.status !== String(tx.status || "") || !$("tx-badge").firstChild) {
    $("transaction").dataset.status = String(tx.status || "");
    $("tx-badge").replaceChildren(badge(tx.status));
  }
  const sentence = statusSentence(tx);
  if ($("tx-status-text").textContent !== sentence) $("tx-status-text").textContent = sentence;

  const sent = tx.sentAmount || null;
  const received = tx.receivedAmount || {};
  const rows = [];
  if (outgoing) {
    if (sent) rows.push(["sent", t("payment.fact.sent"), formatMoney(sent.amount, sent.currency || {})]);
    if (Number.isFinite(tx.fees)) rows.push(["fees", t("payment.fact.fees"), formatMoney(tx.fees, received.currency || {})]);
    rows.push(["received", t("payment.fact.receiving"), formatMoney(received.amount, received.currency || {})]);
    if (sent && sent.currency && received.currency) {
      const rate = sent.currency.code !== received.currency.code ? formatExchangeRate(tx.exchangeRate, sent.currency, received.currency) : "";
      if (rate) rows.push(["rate", t("payment.fact.rate"), rate]);
    }
    rows.push(["to", t("payment.fact.to"), destinationName(tx)]);
    if (tx.paymentRail) rows.push(["rail", t("payment.fact.rail"), railName(tx.paymentRail)]);
  } else {
    rows.push(["received", t("payment.fact.amount"), formatMoney(received.amount, received.currency || {})]);
  }
  if (tx.description) rows.push(["note", t("payment.fact.note"), tx.description]);
  const ref = tx.reconciliationInstructions && tx.reconciliationInstructions.reference;
  if (ref) rows.push(["reference", t("payment.fact.reference"), ref, true]);
  if (tx.createdAt) rows.push(["created", t("payment.fact.created"), formatTime(tx.createdAt), false, tx.createdAt]);
  if (tx.settledAt) rows.push(["settled", t("payment.fact.settled"), formatTime(tx.settledAt), false, tx.settledAt]);
  rows.push(["id", t("payment.fact.id"), tx.id, true]);
  $("tx-facts").replaceChildren(...rows.map(([key, label, value, code, iso]) => fact(key, label, value, code, iso)));

  const reason = failureText(tx, ctx.view.held);
  $("tx-reason").textContent = reason;
  $("tx-reason").hidden = reason === "";

  const confirmedAt = tx.receiptDeliveryConfirmedAt;
  const receipt = $("tx-receipt");
  if (confirmedAt && RECEIPT.has(tx.status)) {
    const time = document.createElement("time");
    time.dateTime = confirmedAt;
    time.textContent = formatTime(confirmedAt, { seconds: true });
    // The time is an element of its own inside the sentence, where the
    // language puts it.
    const mark = "\u0000";
    const [before, after = ""] = t("payment.receiptDelivered", { time: mark }).split(mark);
    receipt.replaceChildren(before, time, after);
    receipt.hidden = false;
  } else {
    receipt.replaceChildren();
    receipt.hidden = true;
  }
}

export function fact(key, label, value, code, iso) {
  const row = document.createElement("div");
  row.dataset.fact = key;
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  let inner;
  if (code) {
    inner = document.createElement("code");
    inner.className = "break";
  } else if (iso) {
    inner = document.createElement("time");
    inner.dateTime = iso;
  }
  if (inner) {
    inner.textContent = value;
    dd.append(inner);
  } else {
    dd.textContent = value;
  }
  row.append(dt, dd);
  return row;
}

export function statusSentence(tx) {
  const out = tx.type === "OUTGOING";
  switch (tx.status) {
    case "CREATED":
    case "PENDING":
      return t(out ? "payment.status.notSent" : "payment.status.incoming");
    case "PENDING_AUTHORIZATION":
      return t("payment.status.awaitingApproval");
    case "PROCESSING":
      return t(out ? "payment.status.processing" : "payment.status.incoming");
    case "COMPLETED":
      return t(out ? "payment.status.delivered" : "payment.status.inWallet");
    case "FAILED":
      return t("payment.status.failed");
    case "REJECTED":
      return t("payment.status.rejected");
    case "REFUNDED":
      return t("payment.status.returned");
    case "EXPIRED":
      return t("payment.status.expired");
  }
  return t("payment.status.other", { status: humanize(tx.status) || t("payment.status.unknown") });
}

// failureText says in plain words what went wrong and where the money is.
// held: for an OFFRAMP_FAILED payment, whether its money is still on hold
// (its return failed too), null while that is not known.
export function failureText(tx, held) {
  switch (tx.status) {
    case "REJECTED":
      return t("payment.failure.rejected");
    case "REFUNDED":
      return t("payment.failure.refunded");
    case "EXPIRED":
      return t("payment.failure.expired");
    case "FAILED":
      break;
    default:
      return "";
  }
  switch (tx.failureReason) {
    case "OFFRAMP_FAILED":
      if (held === true) return t("payment.failure.offrampHeld");
      if (held === false) return t("payment.failure.offrampBack");
      return t("payment.failure.offramp");
    case "QUOTE_EXECUTION_FAILED":
      return t("payment.failure.notStarted");
    case "QUOTE_EXPIRED":
      return t("payment.failure.expired");
    case "MISSING_MANDATORY_PAYEE_DATA":
      return t("payment.failure.missingPayeeData");
  }
  const why = humanize(tx.failureReason);
  return why ? t("payment.failure.otherReason", { reason: why.toLowerCase() }) : t("payment.failure.other");
}

// explainFailure finds out, for an OFFRAMP_FAILED payment, whether its
// money came back: the wallet's money on hold, less what payments still on
// their way hold, covers it only when its return failed as well.
async function explainFailure(tx, generation) {
  const view = ctx.view;
  if (tx.status !== "FAILED" || tx.failureReason !== "OFFRAMP_FAILED" || !tx.sentAmount) return;
  let held = null;
  try {
    const onHold = heldAmount();
    if (onHold < tx.sentAmount.amount) {
      held = false;
    } else {
      const q = new URLSearchParams({ status: "PROCESSING", type: "OUTGOING", limit: "100" });
      const { data } = await api("GET", "/api/transactions?" + q);
      const moving = (data && Array.isArray(data.data) ? data.data : [])
        .filter((x) => x.id !== tx.id && x.sentAmount && Number.isFinite(x.sentAmount.amount))
        .reduce((sum, x) => sum + x.sentAmount.amount, 0);
      held = onHold - moving >= tx.sentAmount.amount;
    }
  } catch {
    held = null;
  }
  if (generation !== view.generation || !view.tx || view.tx.id !== tx.id) return;
  view.held = held;
  renderView(view.tx);
}

// confirmReceipt tells the platform, once, that the person was shown the
// final receipt of tx: only with the tab in view, and not when it already
// was confirmed.
async function confirmReceipt(tx, generation) {
  if (!RECEIPT.has(tx.status) || tx.receiptDeliveryConfirmedAt || ctx.confirming.has(tx.id) || document.hidden) return;
  if ($("transaction").hidden || $("transaction").closest(".view").hidden) return;
  ctx.confirming.add(tx.id);
  try {
    const { data } = await api("POST", "/api/transactions/" + tx.id + "/confirm");
    if (generation !== ctx.view.generation || !data || data.id !== tx.id) return;
    ctx.view.tx = data;
    renderView(data);
  } catch (err) {
    ctx.confirming.delete(tx.id); // tried again when the view is shown again
    if (generation !== ctx.view.generation) return;
    if (!(err instanceof ApiError && err.status === 401)) viewError(t("payment.error.confirm", { reason: messageOf(err) }));
  }
}

function viewError(text) {
  $("tx-error").textContent = text;
  $("tx-error").hidden = false;
}

/**
 * A payment rail's name for a person ("SEPA Instant", "Faster Payments").
 *
 * @param {string} rail a PaymentRail such as "SEPA_INSTANT"
 * @returns {string}
 */
export function railName(rail) {
  const name = Object.hasOwn(RAILS, rail) ? RAILS[rail] : "";
  return (typeof name === "function" ? name() : name) || humanize(rail);
}

export function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  const s = value.toLowerCase().replaceAll("_", " ");
  return s[0].toUpperCase() + s.slice(1);
}

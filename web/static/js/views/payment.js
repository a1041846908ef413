// The view of one payment (/activity/{id}) (GET /api/transactions/{id}).
// It follows a payment on its way: it asks for it again about every
// second, then less often, until the status is final (COMPLETED, FAILED,
// REJECTED, REFUNDED, EXPIRED), and then refreshes the balance and the list.
// A failure is told in plain words by its failureReason. After Send, the
// history entry says so ({sent: true}): the view then says the payment was
// sent.
//
// While the event stream carries the service's webhooks (events.js, wired
// by money.js), the view does not ask again by itself: an event about a
// payment makes it ask at once (even after a final status: a completed
// payment can still come back, REFUNDED). While the stream is down, it
// polls as described above.
//
// The wallet is the platform's receipt channel: once the view shows a final
// receipt (COMPLETED, REFUNDED, FAILED or REJECTED) to the person, with the
// tab in view, it confirms the delivery once (POST
// /api/transactions/{id}/confirm) and shows "Receipt delivered <time>".

import { api, ApiError, messageOf } from "../api.js";
import { heldAmount, refreshBalance } from "../balance.js";
import { formatExchangeRate, formatMoney, formatTime } from "../format.js";
import { t } from "../i18n.js";
import { paths } from "../router.js";
import {
  badge,
  destinationName,
  fact,
  failureText,
  FINAL,
  LIMIT_CODES,
  limitText,
  onNamesChanged,
  railName,
  RECEIPT,
  receivedLabel,
  statusSentence,
} from "../payments.js";
import { reloadTransactions } from "./activity.js";
import { confirmStepUp, StepUpCancelled } from "../stepup.js";


const $ = (id) => document.getElementById(id);

// A followed transaction is asked for again after these delays (ms).
const FOLLOW_FIRST_MS = 1000;
const FOLLOW_MAX_MS = 5000;

const ctx = {
  setStatus: () => {},
  view: { id: "", tx: null, generation: 0, timer: 0, delay: 0, held: null, sent: false, asking: 0, again: false },
  live: false, // the event stream carries the service's webhooks: no polling
  confirming: new Set(), // ids whose receipt confirmation was sent from this page
};

/** Wires the view once. */
export function init({ setStatus }) {
  ctx.setStatus = setStatus;
  $("tx-confirm").addEventListener("click", onConfirm);
  onNamesChanged(() => {
    if (ctx.view.tx) renderView(ctx.view.tx);
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && ctx.view.tx) confirmReceipt(ctx.view.tx, ctx.view.generation);
  });
}

/** Shows the payment route.id. */
export function show(route, { sent = false } = {}) {
  openTransaction(route.id, { focus: false, sent });
}

export const hide = closeTransaction;
export const signOut = closeTransaction;

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
 * does, the view does not poll; when it stops, it starts again.
 *
 * @param {boolean} live
 */
export function setPaymentLive(live) {
  ctx.live = !!live;
  if (ctx.live) return;
  const view = ctx.view;
  if (view.id && !view.timer && view.asking !== view.generation && !(view.tx && FINAL.has(view.tx.status))) {
    follow(view.generation);
  }
}

/**
 * Opens the view of a transaction and follows it until its status is final.
 *
 * @param {string} id a Transaction id
 * @param {{initial?: object, focus?: boolean, sent?: boolean}} [options]
 *   initial: what is already known of it; focus: move the focus to the view
 *   (default true); sent: it was just sent from this page, so reaching a
 *   final status (even at the first look) moves the balance and the list
 */
function openTransaction(id, { initial = null, focus = true, sent = false } = {}) {
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
  $("tx-confirm").hidden = true;
  $("tx-error").hidden = true;
  $("tx-receipt").hidden = true;
  $("tx-reason").hidden = true;
  $("tx-facts").replaceChildren();
  delete $("transaction").dataset.status;
  $("tx-title").textContent = t(sent ? "payment.title.sent" : "payment.title.payment");
  $("tx-badge").replaceChildren();
  $("tx-status-text").textContent = t("payment.loading");
  if (initial && initial.id === view.id) showTx(initial, view.generation);
  if (focus) $("tx-title").focus({ preventScroll: true });
  follow(view.generation);
}

/** Closes the view and stops following its transaction. */
function closeTransaction() {
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
    showTx(data, generation);
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

// showTx renders a newer state of the followed transaction, and acts on a
// change of status: a final one moves the balance and the list.
function showTx(tx, generation) {
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
  // A payment held for the person's yes (a Send left unconfirmed, another
  // tab's) is confirmed here as well.
  $("tx-confirm").hidden = tx.status !== "PENDING_AUTHORIZATION" || !tx.quoteId;
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
    rows.push(["received", t(receivedLabel(tx.status)), formatMoney(received.amount, received.currency || {})]);
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

// onConfirm asks the person to confirm the held payment shown: the quote
// carries its confirmation (scaChallenge).
async function onConfirm() {
  const view = ctx.view;
  const tx = view.tx;
  if (!tx || !tx.quoteId) return;
  const button = $("tx-confirm");
  button.disabled = true;
  $("tx-error").hidden = true;
  try {
    const { data: q } = await api("GET", "/api/quotes/" + tx.quoteId);
    if (!q || q.status !== "PENDING_AUTHORIZATION" || !q.scaChallenge) {
      openTransaction(tx.id, { focus: false });
      return;
    }
    await confirmStepUp(q.scaChallenge, {
      authorizePath: "/api/quotes/" + q.id + "/authorize",
      resendPath: "/api/quotes/" + q.id + "/authorize/resend",
      what: t("stepup.what.payment", { amount: formatMoney(q.totalSendingAmount, q.sendingCurrency), payee: destinationName(tx) }),
      returnFocus: $("tx-title"),
    });
    refreshBalance();
    reloadTransactions();
    if (view.tx && view.tx.id === tx.id) openTransaction(tx.id, { focus: false });
  } catch (err) {
    if (err instanceof StepUpCancelled) return;
    if (err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED") return;
    if (view.tx && view.tx.id === tx.id) openTransaction(tx.id, { focus: false });
    viewError(err instanceof ApiError && LIMIT_CODES.has(err.code) ? limitText(err) : messageOf(err));
  } finally {
    button.disabled = false;
  }
}

function viewError(text) {
  $("tx-error").textContent = text;
  $("tx-error").hidden = false;
}

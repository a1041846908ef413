// The receipt of a payment (/activity/{id}/receipt): what was sent and
// what arrived, the fees in the currency the person picks, the rate as
// people read it, the reference and the times; printable.

import { api, ApiError, messageOf } from "../api.js";
import { formatExchangeRate, formatMoney, formatTime } from "../format.js";
import { humanize, t } from "../i18n.js";
import { paths } from "../router.js";
import {
  destinationName,
  fact,
  failureText,
  onNamesChanged,
  railName,
  receivedLabel,
  STATUS,
  statusSentence,
} from "../payments.js";

const $ = (id) => document.getElementById(id);

const receipt = { id: "", tx: null, generation: 0, fees: "" }; // the receipt shown

/** Wires the view once. */
export function init() {
  $("receipt-fee-currency").addEventListener("change", () => {
    receipt.fees = $("receipt-fee-currency").value;
    if (receipt.tx) renderReceipt(receipt.tx);
  });
  $("receipt-print").addEventListener("click", () => window.print());
  onNamesChanged(() => {
    if (receipt.tx) renderReceipt(receipt.tx);
  });
}

/** Shows the receipt of the payment route.id. */
export function show(route) {
  showReceipt(route.id);
}

export const hide = closeReceipt;
export const signOut = closeReceipt;

/**
 * Shows the receipt of a transaction (/activity/{id}/receipt): what was
 * sent and what arrived, the fees in the currency the person picks, the
 * rate as people read it, the reference and the times.
 *
 * @param {string} id a Transaction id
 */
async function showReceipt(id) {
  const r = receipt;
  const generation = ++r.generation;
  r.id = String(id || "");
  r.tx = null;
  $("receipt").hidden = false;
  $("receipt-back").href = paths.payment(r.id);
  $("receipt-summary").textContent = t("receipt.loading");
  $("receipt-facts").replaceChildren();
  $("receipt-fee-choice").hidden = true;
  receiptError("");
  try {
    const { data } = await api("GET", "/api/transactions/" + r.id); // ids are [A-Za-z0-9:_-]: the BFF matches them as they are
    if (generation !== r.generation) return;
    if (!data || data.id !== r.id) throw new Error(t("receipt.error.unexpected"));
    r.tx = data;
    renderReceipt(data);
  } catch (err) {
    if (generation !== r.generation) return;
    if (err instanceof ApiError && err.status === 401) return;
    $("receipt-summary").textContent = "";
    if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
      return receiptError(t("receipt.error.notFound"));
    }
    receiptError(t("receipt.error.load", { reason: messageOf(err) }));
  }
}

/** Forgets the receipt shown. */
function closeReceipt() {
  const r = receipt;
  r.generation++;
  r.id = "";
  r.tx = null;
  $("receipt").hidden = true;
}

function renderReceipt(tx) {
  const outgoing = tx.type === "OUTGOING";
  const sent = tx.sentAmount || null;
  const received = tx.receivedAmount || {};
  const sc = (sent && sent.currency) || {};
  const rc = received.currency || {};
  $("receipt-title").textContent = t(outgoing ? "receipt.title.payment" : "receipt.title.funding");
  $("receipt-summary").textContent = receiptSummary(tx);

  // The fees are the receiving side's (Transaction.fees); the person may
  // read them in the currency they paid in, converted at the payment's rate.
  const choice = $("receipt-fee-currency");
  const twoCurrencies = outgoing && sent && sc.code && rc.code && sc.code !== rc.code && Number.isFinite(tx.fees);
  if (twoCurrencies) {
    const drawn = sc.code + "\t" + rc.code;
    if (choice.dataset.drawn !== drawn) {
      choice.replaceChildren(
        new Option(t("receipt.fees.paidIn", { currency: sc.code }), sc.code),
        new Option(t("receipt.fees.receivedIn", { currency: rc.code }), rc.code),
      );
      choice.dataset.drawn = drawn;
    }
    if (receipt.fees !== sc.code && receipt.fees !== rc.code) receipt.fees = sc.code;
    choice.value = receipt.fees;
  }
  $("receipt-fee-choice").hidden = !twoCurrencies;

  const rows = [];
  rows.push(["status", t("receipt.fact.status"), STATUS[tx.status] ? t(STATUS[tx.status][0]) : humanize(tx.status)]);
  if (outgoing) {
    if (sent) rows.push(["sent", t("payment.fact.sent"), formatMoney(sent.amount, sc)]);
    if (Number.isFinite(tx.fees)) rows.push(["fees", t("payment.fact.fees"), feesIn(tx, twoCurrencies ? receipt.fees : rc.code)]);
    rows.push(["received", t(receivedLabel(tx.status)), formatMoney(received.amount, rc)]);
    if (sent && sc.code && rc.code && sc.code !== rc.code) {
      const rate = formatExchangeRate(tx.exchangeRate, sc, rc);
      if (rate) rows.push(["rate", t("payment.fact.rate"), rate]);
    }
    rows.push(["to", t("payment.fact.to"), destinationName(tx)]);
    if (tx.paymentRail) rows.push(["rail", t("payment.fact.rail"), railName(tx.paymentRail)]);
  } else {
    rows.push(["received", t("receipt.fact.added"), formatMoney(received.amount, rc)]);
  }
  if (tx.description) rows.push(["note", t("payment.fact.note"), tx.description]);
  const ref = tx.reconciliationInstructions && tx.reconciliationInstructions.reference;
  if (ref) rows.push(["reference", t("payment.fact.reference"), ref, true]);
  if (tx.createdAt) rows.push(["created", t("receipt.fact.started"), formatTime(tx.createdAt, { seconds: true }), false, tx.createdAt]);
  if (tx.settledAt) {
    const settled = t(tx.status === "COMPLETED" ? "receipt.fact.delivered" : "payment.fact.settled");
    rows.push(["settled", settled, formatTime(tx.settledAt, { seconds: true }), false, tx.settledAt]);
  }
  if (tx.updatedAt && tx.updatedAt !== tx.settledAt) {
    rows.push(["updated", t("receipt.fact.updated"), formatTime(tx.updatedAt, { seconds: true }), false, tx.updatedAt]);
  }
  rows.push(["id", t("payment.fact.id"), tx.id, true]);
  $("receipt-facts").replaceChildren(...rows.map(([key, label, value, code, iso]) => fact(key, label, value, code, iso)));
}

function receiptSummary(tx) {
  const sent = tx.sentAmount || null;
  const received = tx.receivedAmount || {};
  if (tx.type !== "OUTGOING") {
    return tx.status === "COMPLETED"
      ? t("receipt.summary.added", { amount: formatMoney(received.amount, received.currency || {}) })
      : statusSentence(tx);
  }
  const amount = sent ? formatMoney(sent.amount, sent.currency || {}) : formatMoney(received.amount, received.currency || {});
  const name = destinationName(tx);
  switch (tx.status) {
    case "COMPLETED":
      return t("receipt.summary.delivered", { amount, name });
    case "PROCESSING":
      return t("receipt.summary.processing", { amount, name });
    case "REFUNDED":
      return t("receipt.summary.returned", { amount, name });
    case "FAILED":
    case "REJECTED":
      return t("receipt.summary.notDelivered", { amount, name, reason: failureText(tx, null) });
  }
  return statusSentence(tx);
}

// feesIn gives the fees (which the service counts in the receiving
// currency) in the currency code asked for, converted at the payment's
// rate when that is the sending one ("≈": the conversion rounds). A
// payment in one currency converts nothing.
function feesIn(tx, code) {
  const rc = (tx.receivedAmount && tx.receivedAmount.currency) || {};
  const sc = (tx.sentAmount && tx.sentAmount.currency) || {};
  if (code !== sc.code || sc.code === rc.code || !(tx.exchangeRate > 0) || !Number.isInteger(sc.decimals) || !Number.isInteger(rc.decimals)) {
    return formatMoney(tx.fees, rc);
  }
  // exchangeRate is sending units per receiving unit.
  const minor = Math.round((tx.fees / 10 ** rc.decimals) * tx.exchangeRate * 10 ** sc.decimals);
  return t("receipt.fees.converted", { converted: formatMoney(minor, sc), fees: formatMoney(tx.fees, rc) });
}

function receiptError(text) {
  $("receipt-error").textContent = text;
  $("receipt-error").hidden = text === "";
}


// What the page says about a payment, shared by the views that show one
// (Activity and Home's recent payments, the payment view, its receipt, Send):
// the status words and badges, the sentence that says where a payment is and
// what went wrong, the rails' names, the name of the account paid, and one
// row of a list or of a payment's facts. It builds elements but touches none
// of the page's: each view draws them where it wants them.
//
// The names of the accounts paid come from the recipients' store (the
// "wallet:accounts" event); a view that shows them is drawn again when they
// change (onNamesChanged).

import { accountLabel, holderName } from "./recipients.js";
import { formatMoney, formatTime } from "./format.js";
import { humanize, said, t } from "./i18n.js";
import { paths } from "./router.js";

/** The statuses a payment ends in (a completed one can still come back: REFUNDED). */
export const FINAL = new Set(["COMPLETED", "FAILED", "REJECTED", "REFUNDED", "EXPIRED"]);
/** The statuses that have a final receipt. */
export const RECEIPT = new Set(["COMPLETED", "REFUNDED", "FAILED", "REJECTED"]);

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

// Statuses in which an outgoing payment's money came back (or is coming back).
export const MONEY_BACK = new Set(["FAILED", "REJECTED", "REFUNDED"]);

/**
 * The label of what the payee gets, by the payment's status: they received
 * it (delivered), would have received it (the money came back), or receive
 * it (on its way). The payment's view and its receipt say the same.
 *
 * @param {string} status
 * @returns {string} an i18n key
 */
export function receivedLabel(status) {
  if (MONEY_BACK.has(status)) return "receipt.fact.wouldHaveReceived";
  return status === "COMPLETED" ? "receipt.fact.received" : "payment.fact.receiving";
}

const names = {
  accounts: new Map(), // ExternalAccount id → account
  changed: [], // called when the names of the accounts changed (onNamesChanged)
};

document.addEventListener("wallet:accounts", (event) => {
  const labels = (accounts) => [...accounts.values()].map((a) => a.id + "\t" + accountLabel(a)).join("\n");
  const before = labels(names.accounts);
  names.accounts = new Map((event.detail.accounts || []).filter((a) => a && a.id).map((a) => [a.id, a]));
  if (labels(names.accounts) === before) return; // the names shown did not change
  for (const fn of names.changed) fn();
});

/** Calls fn whenever the names of the accounts that payments name change. */
export function onNamesChanged(fn) {
  names.changed.push(fn);
}

/** Forgets the accounts' names (signed out: another person may sign in). */
export function forgetNames() {
  names.accounts = new Map();
}

// listItem is one row: a link to the payment's view with its time, what it
// was, the amount and the status. compact (Home) names the recipient only
// and leaves out the lines under it, so that Home fits a phone's screen.
export function listItem(x, { compact = false } = {}) {
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
  const account = names.accounts.get(id);
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

export function badge(status) {
  const el = document.createElement("span");
  const [key, kind] = STATUS[status] || ["", "pending"];
  el.className = "badge badge-" + kind;
  el.textContent = key ? t(key) : humanize(status) || t("activity.status.unknown");
  return el;
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

// The sentence of each status, for a payment out (out) and one in.
const STATUS_SENTENCE = {
  CREATED: (out) => t(out ? "payment.status.notSent" : "payment.status.incoming"),
  PENDING: (out) => t(out ? "payment.status.notSent" : "payment.status.incoming"),
  PENDING_AUTHORIZATION: () => t("payment.status.awaitingApproval"),
  PROCESSING: (out) => t(out ? "payment.status.processing" : "payment.status.incoming"),
  COMPLETED: (out) => t(out ? "payment.status.delivered" : "payment.status.inWallet"),
  FAILED: () => t("payment.status.failed"),
  REJECTED: () => t("payment.status.rejected"),
  REFUNDED: () => t("payment.status.returned"),
  EXPIRED: () => t("payment.status.expired"),
};

export function statusSentence(tx) {
  const say = said(STATUS_SENTENCE, tx.status);
  if (say) return say(tx.type === "OUTGOING");
  return t("payment.status.other", { status: humanize(tx.status) || t("payment.status.unknown") });
}

// What went wrong with a payment that ended without failing (FAILED has
// its reasons, FAILURE_REASON).
const ENDED = {
  REJECTED: () => t("payment.failure.rejected"),
  REFUNDED: () => t("payment.failure.refunded"),
  EXPIRED: () => t("payment.failure.expired"),
};

// What went wrong with a FAILED payment, by its failureReason. held: for
// OFFRAMP_FAILED, whether its money is still on hold.
const FAILURE_REASON = {
  OFFRAMP_FAILED: (held) =>
    held === true ? t("payment.failure.offrampHeld") : held === false ? t("payment.failure.offrampBack") : t("payment.failure.offramp"),
  QUOTE_EXECUTION_FAILED: () => t("payment.failure.notStarted"),
  QUOTE_EXPIRED: () => t("payment.failure.expired"),
  MISSING_MANDATORY_PAYEE_DATA: () => t("payment.failure.missingPayeeData"),
};

// failureText says in plain words what went wrong and where the money is.
// held: for an OFFRAMP_FAILED payment, whether its money is still on hold
// (its return failed too), null while that is not known.
export function failureText(tx, held) {
  if (tx.status !== "FAILED") return said(ENDED, tx.status)?.() ?? "";
  const say = said(FAILURE_REASON, tx.failureReason);
  if (say) return say(held);
  const why = humanize(tx.failureReason);
  return why ? t("payment.failure.otherReason", { reason: why.toLowerCase() }) : t("payment.failure.other");
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

// The refusals of the limits the person set (Security → Limits), which
// Send and a payment's view tell with the way to the limits.
export const LIMIT_CODES = new Set(["LIMIT_EXCEEDED", "DAILY_VOLUME_LIMIT_EXCEEDED", "RECIPIENT_COOLING_OFF"]);

// limitText is a limit's refusal in the person's language, from its
// details (the service's message, in English, when they are missing).
export function limitText(err) {
  const d = err.details || {};
  switch (err.code) {
    case "LIMIT_EXCEEDED":
      if (Number.isFinite(d.limit) && Number.isFinite(d.amount) && d.currency) {
        return t("send.limits.perPayment", { amount: formatMoney(d.amount, d.currency), limit: formatMoney(d.limit, d.currency) });
      }
      break;
    case "DAILY_VOLUME_LIMIT_EXCEEDED":
      if (Number.isFinite(d.limit) && Number.isFinite(d.amount) && d.amount > d.limit && d.currency) {
        return t("send.limits.dailyOver", { amount: formatMoney(d.amount, d.currency), limit: formatMoney(d.limit, d.currency) });
      }
      if (Number.isFinite(d.limit) && Number.isFinite(d.used) && d.currency) {
        const args = { limit: formatMoney(d.limit, d.currency), used: formatMoney(d.used, d.currency),
          left: formatMoney(Math.max(d.limit - d.used, 0), d.currency) };
        // availableAt: when this payment fits, as earlier ones pass 24
        // hours; shown to the minute, so rounded up to one (a time that
        // drops its seconds would name a minute still refused).
        const at = typeof d.availableAt === "string" ? Date.parse(d.availableAt) : NaN;
        if (Number.isFinite(at)) {
          const minute = Math.ceil(at / 60000) * 60000;
          return t("send.limits.dailyAt", { ...args, time: formatTime(new Date(minute).toISOString()) });
        }
        return t("send.limits.daily", args);
      }
      break;
    case "RECIPIENT_COOLING_OFF":
      if (typeof d.availableAt === "string") return t("send.limits.coolingOff", { time: formatTime(d.availableAt) });
      break;
  }
  return err.message;
}

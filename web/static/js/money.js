// The money parts of the signed-in view, wired together for app.js: the
// balance (with sandbox funding), sending (quotes), and the transactions.
//
//   balance.js       Balance card, "Add funds" in sandbox mode
//   send.js          Send money: quote, review, sign and execute
//   transactions.js  the history, and the view that follows one payment
//   statement.js     the statement: every change to the balance, a month as CSV
//   events.js        the service's webhooks, live (GET /api/events)
//
// The event stream moves the others: a payment event updates the open
// payment view and the list and reads the balance again; a balance event
// reads the balance again; both load the statement's newest lines. Events
// come in bursts (a payment's status and its balance together), so the
// reads they cause are gathered for 50 ms.
//
// app.js calls initMoney once, showMoney(me) whenever it shows the signed-in
// view (GET /api/me), and hideMoney when it leaves it.

import { hideBalance, initBalance, refreshBalance, showBalance } from "./balance.js";
import { startEvents, stopEvents } from "./events.js";
import { hideSend, initSend, showSend } from "./send.js";
import { hideStatement, initStatement, statementChanged } from "./statement.js";
import {
  hideTransactions,
  initTransactions,
  reloadTransactions,
  setTransactionsLive,
  showTransactions,
  transactionChanged,
} from "./transactions.js";

// What the events asked for, done together once the burst is over.
const pending = { balance: false, payments: new Map(), resync: false, timer: 0 };

function soon(change) {
  change(pending);
  if (!pending.timer) pending.timer = setTimeout(flush, 50);
}

function flush() {
  const { balance, payments, resync } = pending;
  pending.balance = false;
  pending.payments = new Map();
  pending.resync = false;
  pending.timer = 0;
  if (resync) {
    transactionChanged(null);
  } else {
    for (const tx of payments.values()) transactionChanged(tx);
  }
  if (resync || payments.size > 0) reloadTransactions();
  if (balance || resync || payments.size > 0) {
    refreshBalance();
    statementChanged();
  }
}

const eventHandlers = {
  onPayment: (tx) => soon((p) => {
    if (tx && typeof tx.id === "string") p.payments.set(tx.id, tx);
  }),
  onBalance: () => soon((p) => {
    p.balance = true;
  }),
  onResync: () => soon((p) => {
    p.resync = true;
  }),
  onLive: (live) => setTransactionsLive(live),
};

/**
 * Wires the sections once.
 *
 * @param {{wallet: () => Promise<object>, key: () => object|null, config: () => object|null,
 *          setStatus: (text: string) => void}} options
 */
export function initMoney({ wallet, key, keyPending, keyReady, config, setStatus }) {
  initBalance({
    config,
    setStatus,
    onFunded: () => {
      reloadTransactions();
      statementChanged();
    },
  });
  initTransactions({ setStatus });
  initStatement();
  initSend({ wallet, key, keyPending, keyReady, setStatus });
}

/**
 * Shows the sections for the signed-in person.
 *
 * @param {object} me the answer of GET /api/me
 */
export function showMoney(me) {
  showBalance((me && me.internalAccount) || null);
  showSend();
  showTransactions();
  startEvents(eventHandlers);
}

/** Hides the sections and forgets what they showed. */
export function hideMoney() {
  stopEvents();
  clearTimeout(pending.timer);
  pending.timer = 0;
  pending.balance = false;
  pending.payments = new Map();
  pending.resync = false;
  hideSend();
  hideTransactions();
  hideStatement();
  hideBalance();
}

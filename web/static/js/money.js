// The service's webhooks, live (GET /api/events, events.js), moving the
// money views while signed in: a payment event updates the open payment
// view and the list and reads the balance again; a balance event reads the
// balance again; both load the statement's newest lines. Events come in
// bursts (a payment's status and its balance together), so the reads they
// cause are gathered for 50 ms.
//
// app.js calls startMoneyEvents whenever it shows the signed-in page (GET
// /api/me), once the views have been told, and stopMoneyEvents when it
// leaves it, before they are.

import { refreshBalance } from "./balance.js";
import { startEvents, stopEvents } from "./events.js";
import { statementChanged } from "./views/statement.js";
import { reloadTransactions, setListLive } from "./views/activity.js";
import { setPaymentLive, transactionChanged } from "./views/payment.js";

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
  onLive: (live) => {
    setPaymentLive(live);
    setListLive(live);
  },
};

/** Signed in: the event stream is followed. */
export function startMoneyEvents() {
  startEvents(eventHandlers);
}

/** Signed out: the event stream ends and what it asked for is dropped. */
export function stopMoneyEvents() {
  stopEvents();
  clearTimeout(pending.timer);
  pending.timer = 0;
  pending.balance = false;
  pending.payments = new Map();
  pending.resync = false;
}

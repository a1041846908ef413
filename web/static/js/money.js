// The money parts of the signed-in view, wired together for app.js: the
// balance (with sandbox funding), sending (quotes), and the transactions.
//
//   balance.js       Balance card, "Add funds" in sandbox mode
//   send.js          Send money: quote, review, sign and execute
//   transactions.js  the history, and the view that follows one payment
//
// app.js calls initMoney once, showMoney(me) whenever it shows the signed-in
// view (GET /api/me), and hideMoney when it leaves it.

import { hideBalance, initBalance, showBalance } from "./balance.js";
import { hideSend, initSend, showSend } from "./send.js";
import { hideTransactions, initTransactions, reloadTransactions, showTransactions } from "./transactions.js";

/**
 * Wires the sections once.
 *
 * @param {{wallet: () => Promise<object>, key: () => object|null, config: () => object|null,
 *          setStatus: (text: string) => void}} options
 */
export function initMoney({ wallet, key, config, setStatus }) {
  initBalance({ config, setStatus, onFunded: () => reloadTransactions() });
  initTransactions({ setStatus });
  initSend({ wallet, key, setStatus });
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
}

/** Hides the sections and forgets what they showed. */
export function hideMoney() {
  hideSend();
  hideTransactions();
  hideBalance();
}

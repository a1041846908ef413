// The Home view (/): the balance with Send and, in the sandbox, Add funds
// (balance.js), and the last payments (the recent list of activity.js).
// Drawn while signed in whatever the view, so that Home is there at once.

import { hideBalance, initBalance, showBalance } from "../balance.js";
import { statementChanged } from "./statement.js";
import { reloadTransactions } from "../transactions.js";

/** Wires the view once. */
export function init({ config, setStatus }) {
  initBalance({
    config,
    setStatus,
    onFunded: () => {
      reloadTransactions();
      statementChanged();
    },
  });
}

/** Signed in: the balance of the wallet account, as GET /api/me read it. */
export function signIn(me) {
  showBalance((me && me.internalAccount) || null);
}

/** Signed out: forgets the balance. */
export function signOut() {
  hideBalance();
}

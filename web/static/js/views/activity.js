// The Activity view (/activity): every payment and funding, by status, and
// the recent ones on Home (transactions.js), loaded while signed in.

import { hideTransactions, initTransactions, showTransactions } from "../transactions.js";

/** Wires the view once. */
export function init({ setStatus }) {
  initTransactions({ setStatus });
}

export const signIn = showTransactions;
export const signOut = hideTransactions;

// The view of one payment (/activity/{id}), followed live until its status
// is final (transactions.js openTransaction). After Send, the history
// entry says so ({sent: true}): the view then says the payment was sent.

import { closeTransaction, openTransaction } from "../transactions.js";

/** Shows the payment route.id. */
export function show(route, { sent = false } = {}) {
  openTransaction(route.id, { focus: false, sent });
}

export const hide = closeTransaction;

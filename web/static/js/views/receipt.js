// The receipt of a payment (/activity/{id}/receipt) (transactions.js
// showReceipt).

import { closeReceipt, showReceipt } from "../transactions.js";

/** Shows the receipt of the payment route.id. */
export function show(route) {
  showReceipt(route.id);
}

export const hide = closeReceipt;

// The Statement view (/activity/statement): every change to the balance,
// with the balance after it, and a month as CSV (statement.js).

import { closeStatement, hideStatement, initStatement, showStatement } from "../statement.js";

export const init = initStatement;
export const signOut = hideStatement;
export const show = showStatement;
export const hide = closeStatement;

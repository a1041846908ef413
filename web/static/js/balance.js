// The wallet account as GET /api/me last read it (an InternalAccount), for
// the views that need its balance, currency or id: Home draws it, Send
// checks an amount against it, the payment view finds out whether a failed
// payment's money is still on hold, the statement reads its entries.
//
// The wallet account has two amounts: balance, what can be spent now, and
// totalBalance, which also counts the money on hold: payments on their way
// that have not settled, and money of a failed payment whose return has not
// completed.

import { api } from "./api.js";

const ctx = {
  account: null, // the InternalAccount shown
  on: false, // signed in: an account was told (showAccount), not forgotten since
  asked: 0, // generation of the last GET /api/me asked for
  shown: 0, // generation of the answer shown; older answers are dropped
  listeners: [], // called with the account whenever it is read (onBalance)
};

/** Calls fn(account) whenever the wallet account is read again (null: not known). */
export function onBalance(fn) {
  ctx.listeners.push(fn);
}

/**
 * The wallet account (an InternalAccount), read just now: answers to
 * refreshBalance calls made before are dropped.
 *
 * @param {object} account
 */
export function showAccount(account) {
  ctx.shown = ctx.asked;
  put(account);
}

function put(account) {
  ctx.account = account && typeof account === "object" ? account : null;
  ctx.on = true;
  for (const fn of ctx.listeners) fn(ctx.account);
}

/** Forgets the account (signed out: another person may sign in). */
export function forgetAccount() {
  ctx.shown = ++ctx.asked;
  ctx.account = null;
  ctx.on = false;
}

/** What can be spent now in the smallest unit, or NaN before it is known. */
export function availableAmount() {
  const b = ctx.account && ctx.account.balance;
  return b && Number.isFinite(b.amount) ? b.amount : NaN;
}

/** The currency of the wallet (a Currency object), or null before it is known. */
export function walletCurrency() {
  const b = ctx.account && ctx.account.balance;
  return b && b.currency && typeof b.currency === "object" ? b.currency : null;
}

/** The wallet account's id, or "". */
export function walletAccountId() {
  return ctx.account && typeof ctx.account.id === "string" ? ctx.account.id : "";
}

/** The money on hold (totalBalance − balance) in the smallest unit, 0 when none. */
export function heldAmount() {
  const a = ctx.account || {};
  const total = a.totalBalance && Number.isFinite(a.totalBalance.amount) ? a.totalBalance.amount : NaN;
  const available = a.balance && Number.isFinite(a.balance.amount) ? a.balance.amount : NaN;
  return Number.isFinite(total) && Number.isFinite(available) && total > available ? total - available : 0;
}

/**
 * Asks the BFF for the wallet account again (GET /api/me) and tells it,
 * unless the answer to a later call is told already. When it resolves, the
 * account is at least as recent as this call's answer (so a caller may read
 * heldAmount()). Resolves with the account, or null when it could not be
 * read (a 401 signs the page out through api.js).
 *
 * @returns {Promise<object|null>}
 */
export async function refreshBalance() {
  const generation = ++ctx.asked;
  try {
    const { data } = await api("GET", "/api/me");
    if (generation <= ctx.shown || !ctx.on) return null;
    const account = data && data.internalAccount;
    if (!account || (ctx.account && account.id !== ctx.account.id)) return null;
    ctx.shown = generation;
    put(account);
    return account;
  } catch {
    return null;
  }
}

// The person's recipients (their external accounts): the list, kept here
// for every view that needs it, and how to name one.
//
// The list is asked for (GET /api/customers/external-accounts) when the
// person signs in (showRecipients) and forgotten when they sign out
// (hideRecipients). Every time it changes the page is told with a
// "wallet:accounts" event on document ({detail: {accounts}}, removed,
// INACTIVE, accounts included: payments still name them); the Send and
// Activity views take their accounts from it. While an account is PENDING
// (the service is verifying it) the list is asked for again now and then,
// so that it turns Active without a click.
//
// The Recipients view draws the list (drawRecipientsWith); the add form
// and a recipient's view change it (addToList).

import { api, ApiError } from "./api.js";
import { backoff } from "./backoff.js";
import { humanize, said, t } from "./i18n.js";
import { typeFacts, typeLabelKey } from "./accounttypes.js";

// The words of each status of an account: its badge, and what a person can
// do with an account in it.
const STATUS = {
  PENDING: { badge: () => t("recipients.status.pending"), advice: () => t("recipients.advice.pending") },
  ACTIVE: { badge: () => t("recipients.status.active"), advice: () => t("recipients.advice.active") },
  UNDER_REVIEW: { badge: () => t("recipients.status.underReview"), advice: () => t("recipients.advice.underReview") },
  INACTIVE: { badge: () => t("recipients.status.removed"), advice: () => t("recipients.advice.removed") },
};

/** The badge text of a status ("" for none). */
export function statusText(status) {
  return said(STATUS, status)?.badge() || humanize(status) || t("recipients.status.unknown");
}

/** What a person can do with an account in each status ("" when unknown). */
export function statusAdvice(status) {
  return said(STATUS, status)?.advice() ?? "";
}

// Where an account's primary identifier is, by preference.
export const PRIMARY = ["accountNumber", "iban", "clabeNumber", "phoneNumber", "address", "pixKey", "vpa"];

// While an account is PENDING, the list is asked for again after these
// delays (ms), the last one repeating.
const PENDING_DELAYS = [1000, 2000, 3000, 5000, 10000, 30000];

const store = {
  shown: false, // signed in: the list is kept
  loading: 0, // generation of the list being loaded
  list: [], // the accounts, as last loaded or changed
  pending: backoff(PENDING_DELAYS), // the next look at PENDING accounts; later while they stay PENDING
  // What draws the list (the Recipients view): loading() when it is asked
  // for, loaded(all) with every account, put(account) when one changed,
  // failed(err) when it could not be loaded.
  view: { loading() {}, loaded() {}, put() {}, failed() {} },
};

/**

/** Sets what draws the list (the Recipients view). */
export function drawRecipientsWith(view) {
  store.view = view;
}

/** The accounts as last loaded or changed. */
export function recipientList() {
  return store.list;
}

/** Signed in: the list is loaded, unless it is already. */
export function showRecipients() {
  if (!store.shown) {
    store.shown = true;
    loadRecipients();
  }
}

/** Signed out: the list is forgotten (another person may sign in). */
export function hideRecipients() {
  store.shown = false;
  store.loading++;
  store.pending.reset();
  store.list = [];
}

/** Asks for the list again (at most 10 pages of 100). */
export async function loadRecipients() {
  const generation = ++store.loading;
  store.view.loading();
  try {
    const all = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const q = new URLSearchParams({ limit: "100" });
      if (cursor) q.set("cursor", cursor);
      const { data } = await api("GET", "/api/customers/external-accounts?" + q);
      if (generation !== store.loading) return;
      const items = data && Array.isArray(data.data) ? data.data : [];
      all.push(...items);
      if (!data.hasMore || typeof data.nextCursor !== "string" || data.nextCursor === "") break;
      cursor = data.nextCursor;
    }
    store.view.loaded(all);
    listChanged(all);
  } catch (err) {
    if (generation !== store.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    store.view.failed(err);
  }
}

// listable: removed (INACTIVE) accounts are kept for the payments that
// name them, but are no longer recipients.
export const listable = (a) => a && a.status !== "INACTIVE";

/** Puts a new or changed account into the list (a removed one: INACTIVE). */
export function addToList(account) {
  store.view.put(account);
  store.pending.reset(); // a new account: look at it again soon
  listChanged(store.list.filter((a) => a.id !== account.id).concat([account]));
}

// listChanged keeps the list, tells the page, and looks again later while
// an account is PENDING.
function listChanged(list) {
  store.list = list;
  document.dispatchEvent(new CustomEvent("wallet:accounts", { detail: { accounts: list.slice() } }));
  store.pending.stop();
  if (!store.shown || !list.some((a) => a && a.status === "PENDING")) {
    store.pending.reset();
    return;
  }
  store.pending.later(() => {
    if (store.shown) loadRecipients();
  });
}

/**
 * Names an external account for a person: its kind and the last four
 * characters of its number, after the holder's name when it has one, e.g.
 * "Ada Lovelace, US bank account •••• 5678".
 *
 * @param {object} account an ExternalAccount
 * @returns {string}
 */
export function accountLabel(account) {
  const info = (account && account.accountInfo) || {};
  const last4 = lastFour(info);
  const label = last4 ? t("recipients.account.kindAndNumber", { kind: kindOf(info), last4 }) : kindOf(info);
  const name = holderName(account);
  return name ? t("recipients.account.holderAndKind", { holder: name, account: label }) : label;
}

/**
 * The name of the account's holder (its beneficiary): the full name of a
 * person or the legal name of a business; "" for a wallet or a holder
 * without a name.
 *
 * @param {object} account an ExternalAccount
 * @returns {string}
 */
export function holderName(account) {
  const info = (account && account.accountInfo) || {};
  const b = info.beneficiary || {};
  if (typeof b.fullName === "string" && b.fullName.trim()) return b.fullName.trim();
  const legal = b.businessInfo && b.businessInfo.legalName;
  return typeof legal === "string" ? legal.trim() : "";
}

/**
 * The address of one recipient's view, e.g. "/recipients/ExternalAccount:0199…".
 *
 * @param {string} id an ExternalAccount id
 * @returns {string}
 */
export function recipientPath(id) {
  return "/recipients/" + pathSegment(id);
}

// pathSegment puts an id in a path as it is ("ExternalAccount:0199…"): the
// BFF matches ids unescaped, so only characters no id has are escaped.
export function pathSegment(id) {
  return String(id).replace(/[^A-Za-z0-9:._-]/g, encodeURIComponent);
}

/** The kind of an account in words ("US bank account"). */
export function kindOf(info) {
  const type = info.accountType;
  const key = typeof type === "string" && type !== "" ? typeLabelKey(type) : "";
  const name = key ? t(key) : "";
  return (name !== key && name) || humanize(type) || t("recipients.account.kindUnknown");
}

/** The last four characters of an account's primary identifier ("" for none). */
export function lastFour(info) {
  for (const key of PRIMARY) {
    const v = info[key];
    if (typeof v === "string" && v !== "") return v.slice(-4);
  }
  return "";
}

// countryOf is the country an account pays into, as far as it says: the
// holder's address, the XOF region, or the country of its type.
export function countryOf(account) {
  const info = account.accountInfo || {};
  const address = (info.beneficiary && info.beneficiary.address) || {};
  if (typeof address.country === "string" && address.country) return address.country;
  if (typeof info.region === "string" && info.region) return info.region;
  const facts = typeFacts(info.accountType);
  return (facts && facts.country) || "";
}

/** Whether an account is a wallet (no holder, no bank). */
export function isWallet(account) {
  const info = (account && account.accountInfo) || {};
  const facts = typeFacts(info.accountType);
  return !!(facts && facts.wallet);
}

/** A message of the service as a sentence: capitalised, with a full stop. */
export function sentence(message) {
  let s = typeof message === "string" && message !== "" ? message : t("recipients.form.error.invalid");
  s = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(s) ? s : s + ".";
}

// The Recipients view (/recipients): the person's recipients, each a link
// to its own view (recipientPath), with its status; removed ones are not
// listed. The list itself is kept by recipients.js; this view draws it.

import { messageOf } from "../api.js";
import { t } from "../i18n.js";
import {
  drawRecipientsWith,
  hideRecipients,
  holderName,
  kindOf,
  lastFour,
  listable,
  loadRecipients,
  recipientPath,
  sentence,
  showRecipients,
  statusText,
} from "../recipients.js";

const $ = (id) => document.getElementById(id);

/** Wires the view once. */
export function init() {
  $("accounts-refresh").addEventListener("click", () => loadRecipients());
  drawRecipientsWith({ loading, loaded, put, failed });
}

/** Signed in: the list is (re)loaded when it was forgotten. */
export function signIn() {
  $("accounts").hidden = false;
  showRecipients();
}

/** Signed out: forgets what it showed (another person may sign in). */
export function signOut() {
  hideRecipients();
  $("accounts").hidden = true;
  $("accounts-list").replaceChildren();
  $("accounts-empty").hidden = true;
  $("accounts-error").hidden = true;
}

function loading() {
  $("accounts-error").hidden = true;
}

function loaded(all) {
  const listed = all.filter(listable);
  $("accounts-list").replaceChildren(...listed.map(accountItem));
  $("accounts-empty").hidden = listed.length > 0;
}

function failed(err) {
  const errorEl = $("accounts-error");
  errorEl.textContent = t("recipients.list.error.load", { reason: sentence(messageOf(err)), refresh: buttonName("accounts-refresh") });
  errorEl.hidden = false;
}

// put draws an account that changed: in place, at the end when new, or
// gone when removed.
function put(account) {
  const list = $("accounts-list");
  const old = [...list.children].find((el) => el.dataset.id === account.id);
  if (!listable(account)) {
    if (old) old.remove();
  } else if (old) {
    old.replaceWith(accountItem(account));
  } else {
    list.append(accountItem(account));
  }
  $("accounts-empty").hidden = list.children.length > 0;
}

// accountItem is one recipient of the list: a link to its view, named by
// the holder, the kind of account, its currency and last four characters,
// then its status.
function accountItem(account) {
  const info = (account && account.accountInfo) || {};
  const li = document.createElement("li");
  li.className = "account";
  li.dataset.id = String(account.id || "");
  li.dataset.status = String(account.status || "");

  const link = document.createElement("a");
  link.className = "account-link";
  link.href = recipientPath(account.id || "");
  const main = document.createElement("span");
  main.className = "account-main";
  const name = holderName(account);
  if (name) {
    const holder = document.createElement("span");
    holder.className = "account-holder";
    holder.textContent = name;
    main.append(holder, " ");
  }
  const type = document.createElement("span");
  type.className = "account-kind";
  type.textContent = kindOf(info);
  const currency = document.createElement("span");
  currency.className = "account-currency";
  currency.textContent = String(account.currency || "");
  main.append(type, " ", currency);

  const ident = document.createElement("span");
  ident.className = "account-ident";
  const last4 = lastFour(info);
  if (last4) {
    // Read as "… 5678", not as four bullets.
    const dots = document.createElement("span");
    dots.setAttribute("aria-hidden", "true");
    dots.textContent = "•••• ";
    ident.append(" ", dots, last4);
  }
  link.append(main, ident);

  const badge = document.createElement("span");
  const status = String(account.status || "");
  badge.className = "badge badge-" + status.toLowerCase().replaceAll("_", "-");
  badge.textContent = statusText(status);

  li.append(link, " ", badge);
  return li;
}

// buttonName is the text of a button, for a message that tells the person
// to choose it: the same words as on the button, in whatever language.
function buttonName(id) {
  const el = $(id);
  return el ? el.textContent.trim() : "";
}

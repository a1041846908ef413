// The view of one recipient (/recipients/{id}): its facts (holder, type,
// bank, last four, currency, country, status, added) and its Remove, with a
// confirmation step. Its heading names the recipient once it is known.

import { api, ApiError, messageOf } from "../api.js";
import { t } from "../i18n.js";
import { countryName, wordsLocale } from "../countries.js";
import {
  accountLabel,
  addToList,
  countryOf,
  holderName,
  isWallet,
  kindOf,
  lastFour,
  pathSegment,
  recipientList,
  sentence,
  statusAdvice,
  statusText,
} from "../recipients.js";
import { current } from "../router.js";

const $ = (id) => document.getElementById(id);

const ctx = {
  setStatus: () => {},
  get list() {
    return recipientList();
  },
};

/** Wires the view once. */
export function init({ setStatus }) {
  ctx.setStatus = setStatus;
}

/** Shows the recipient route.id; the heading names it once it is known. */
export function show(route) {
  $("recipient-title").textContent = t("recipients.detail.title");
  showRecipient(route.id).then((account) => {
    if (account && current() && current().name === "recipient" && current().id === route.id) {
      $("recipient-title").textContent = holderName(account) || accountLabel(account);
    }
  });
}

/**
 * Renders one recipient into container: its facts (holder, type, bank,
 * last four, currency, country, status, date added) and, unless it was
 * removed already, "Remove recipient", which asks for a confirmation
 * first. Uses the loaded list, or asks the BFF for the account (a deep
 * link before the list is in).
 *
 * @param {string} id an ExternalAccount id
 * @param {HTMLElement} [container] emptied and filled; #recipient-detail
 *   when not given
 * @returns {Promise<object|null>} the account, or null when the person has
 *   none with this id (container then says so)
 */
export async function showRecipient(id, container = $("recipient-detail")) {
  const generation = (container.dataset.generation = String(Number(container.dataset.generation || 0) + 1));
  let account = ctx.list.find((a) => a && a.id === id) || null;
  if (!account) {
    container.replaceChildren(paragraph("hint", t("recipients.detail.loading")));
    try {
      const { data } = await api("GET", "/api/customers/external-accounts/" + pathSegment(id));
      account = data && data.id ? data : null;
    } catch (err) {
      if (container.dataset.generation !== generation) return null;
      if (err instanceof ApiError && err.status === 401) return null; // the page signs out
      if (!(err instanceof ApiError && err.status === 404)) {
        const p = paragraph("form-error", t("recipients.detail.error.load", { reason: sentence(messageOf(err)) }));
        p.setAttribute("role", "alert");
        container.replaceChildren(p);
        return null;
      }
    }
    if (container.dataset.generation !== generation) return null;
  }
  if (!account) {
    // The message has a {link} where the link to the list goes.
    const [before, after = ""] = t("recipients.detail.notFound").split("{link}");
    const p = paragraph("notice", before);
    const back = document.createElement("a");
    back.href = "/recipients";
    back.textContent = t("recipients.detail.notFoundLink");
    p.append(back, after);
    container.replaceChildren(p);
    return null;
  }
  renderRecipient(account, container);
  return account;
}

function renderRecipient(account, container) {
  const info = account.accountInfo || {};
  const b = info.beneficiary || {};
  const facts = document.createElement("dl");
  facts.className = "facts recipient-facts";
  const fact = (term, value, name) => {
    if (!value) return;
    const row = document.createElement("div");
    row.dataset.fact = name;
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value;
    row.append(dt, dd);
    facts.append(row);
  };
  const status = String(account.status || "");
  const badge = document.createElement("span");
  badge.className = "badge badge-" + status.toLowerCase().replaceAll("_", "-");
  badge.textContent = statusText(status);

  const wallet = isWallet(account);
  fact(t("recipients.detail.holder"), holderName(account) || (wallet ? "" : t("recipients.detail.holderNotGiven")), "holder");
  fact(t("recipients.detail.type"), kindOf(info), "type");
  fact(t("recipients.detail.bank"), typeof info.bankName === "string" ? info.bankName : "", "bank");
  const last4 = lastFour(info);
  fact(t("recipients.detail.number"), last4 ? t("recipients.detail.endingIn", { last4 }) : "", "number");
  fact(t("recipients.detail.currency"), String(account.currency || ""), "currency");
  fact(t("recipients.detail.country"), countryName(countryOf(account)), "country");
  fact(t("recipients.detail.status"), badge, "status");
  fact(t("recipients.detail.added"), dateText(account.createdAt), "added");

  const advice = paragraph("hint recipient-advice", statusAdvice(status));
  const error = paragraph("form-error", "");
  error.setAttribute("role", "alert");
  error.hidden = true;
  const result = paragraph("notice", "");
  result.setAttribute("role", "status");
  result.tabIndex = -1;
  result.hidden = true;
  const parts = [facts, advice, error, result];

  if (status !== "INACTIVE") {
    const label = accountLabel(account);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "secondary";
    remove.dataset.action = "remove";
    remove.textContent = t("recipients.remove.button");

    const confirm = document.createElement("div");
    confirm.className = "confirm";
    confirm.setAttribute("role", "group");
    confirm.hidden = true;
    const question = paragraph("", t("recipients.remove.question", { recipient: label }));
    question.id = "recipient-confirm-" + String(account.id).replace(/[^A-Za-z0-9_-]/g, "-");
    confirm.setAttribute("aria-labelledby", question.id);
    const yes = document.createElement("button");
    yes.type = "button";
    yes.dataset.action = "confirm-remove";
    yes.textContent = t("recipients.remove.confirm");
    const no = document.createElement("button");
    no.type = "button";
    no.className = "secondary";
    no.dataset.action = "cancel-remove";
    no.textContent = t("recipients.remove.cancel");
    confirm.append(question, yes, " ", no);

    remove.addEventListener("click", () => {
      error.hidden = true;
      remove.hidden = true;
      confirm.hidden = false;
      no.focus(); // the safe choice first; the group's label asks the question
    });
    no.addEventListener("click", () => {
      confirm.hidden = true;
      remove.hidden = false;
      remove.focus();
    });
    yes.addEventListener("click", async () => {
      yes.disabled = no.disabled = true;
      yes.setAttribute("aria-busy", "true");
      error.hidden = true;
      try {
        await api("DELETE", "/api/customers/external-accounts/" + pathSegment(account.id));
      } catch (err) {
        yes.disabled = no.disabled = false;
        yes.removeAttribute("aria-busy");
        if (err instanceof ApiError && err.status === 401) return; // the page signs out
        confirm.hidden = true;
        remove.hidden = false;
        error.textContent =
          err instanceof ApiError && err.status === 404
            ? t("recipients.remove.error.gone")
            : t("recipients.remove.error.failed", { reason: sentence(messageOf(err)) });
        error.hidden = false;
        remove.focus();
        return;
      }
      const removed = { ...account, status: "INACTIVE" };
      addToList(removed);
      document.dispatchEvent(new CustomEvent("wallet:recipient-removed", { detail: { account: removed } }));
      renderRecipient(removed, container);
      const done = container.querySelector("[role=status]");
      done.textContent = t("recipients.remove.done", { recipient: label });
      done.hidden = false;
      done.focus();
      ctx.setStatus(t("recipients.remove.status"));
    });
    parts.push(remove, confirm);
  }
  container.replaceChildren(...parts);
}

function dateText(iso) {
  const time = typeof iso === "string" ? Date.parse(iso) : NaN;
  if (!Number.isFinite(time)) return "";
  return new Date(time).toLocaleDateString(wordsLocale(), { dateStyle: "long" });
}

function paragraph(className, text) {
  const p = document.createElement("p");
  if (className) p.className = className;
  p.textContent = text;
  return p;
}

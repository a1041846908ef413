// The Statement view (/activity/statement): every change to the wallet's
// balance, newest first, each with the balance after it, read from the
// service's books (GET /api/internal-accounts/{id}/entries: the wallet's
// ledger entries, newest first, "Load more" with nextCursor), and a month
// of it downloaded as a CSV file.
//
// A line is one ledger transaction: the entries it wrote on the wallet's
// two sides, available and held, taken together. A payment's HOLD moves
// its amount from available to held (the balance, available + held, stays
// the same), its POST takes it from held (the balance drops), a VOID gives
// it back to available; money added comes in on the available side. So a
// line's amount is what the transaction did to the balance, and a move
// between the two sides shows as the amount put on hold or released from
// it. The balance after a line is availableAfter + heldAfter, with the
// money on hold beside it when there is some. The lines add up: each
// balance is the one below it plus the line's amount.
//
// The download asks for the month's entries page by page
// (createdAfter/createdBefore, months in UTC, as the file's times are),
// oldest first in the file, and saves the file through a Blob URL and an
// <a download>: nothing leaves the browser, and the page's CSP allows it
// (a download is no fetch and runs no script).

import { api, ApiError, messageOf } from "../api.js";
import { walletAccountId, walletCurrency } from "../balance.js";
import { toCSV } from "../csv.js";
import { decimalAmount, formatMoney, formatTime } from "../format.js";
import { getLocale, t } from "../i18n.js";
import { paths } from "../router.js";
import { saveFile } from "../download.js";

const $ = (id) => document.getElementById(id);

// Entries per "Load more", and per request of a download (the service's
// largest page).
const PAGE = 50;
const EXPORT_PAGE = 100;
// A month with more pages than this is refused rather than read forever.
const EXPORT_MAX_PAGES = 1000;
// Months offered for download: the current one (UTC) and the ones before.
const MONTHS = 24;

// The kinds of ledger transaction, in words.
const KINDS = {
  OPENING: "statement.kind.opening",
  FUNDING: "statement.kind.funding",
  DEPOSIT: "statement.kind.deposit",
  INCOMING: "statement.kind.incoming",
  HOLD: "statement.kind.hold",
  POST: "statement.kind.post",
  VOID: "statement.kind.void",
  RETURN: "statement.kind.return",
};

const ctx = {
  shown: false,
  lines: [], // statement lines, newest first
  cursor: "", // nextCursor of the last page, "" when there is no more
  pages: 0,
  generation: 0, // of the list being loaded; older answers are dropped
  more: false, // a "Load more" is under way
  epoch: 0, // counts sign-outs (signOut): a download begun before saves nothing
  downloading: false,
};

/** Wires the view once. */
export function init() {
  $("statement-refresh").addEventListener("click", () => loadPage(""));
  $("statement-more").addEventListener("click", () => {
    if (ctx.cursor) loadPage(ctx.cursor);
  });
  $("statement-download-form").addEventListener("submit", onDownload);
}

/** Shows the statement (the view at /activity/statement) and loads its newest lines. */
export function show() {
  ctx.shown = true;
  fillMonths();
  loadPage("");
}

/** Leaves the view; its lines stay until the next time it is shown. */
export function hide() {
  ctx.shown = false;
}

/**
 * The balance moved (an event, a funding): the statement shows the new
 * lines at once, unless the person has loaded more pages (that would fold
 * them away).
 */
export function statementChanged() {
  if (ctx.shown && ctx.pages <= 1 && !ctx.more) loadPage("");
}

/** Signed out: forgets everything shown (another person may sign in next). */
export function signOut() {
  ctx.shown = false;
  ctx.generation++;
  ctx.epoch++;
  ctx.more = false;
  ctx.lines = [];
  ctx.cursor = "";
  ctx.pages = 0;
  $("statement-lines").replaceChildren();
  $("statement-table").hidden = true;
  $("statement-empty").hidden = true;
  $("statement-more").hidden = true;
  $("statement-download-status").textContent = "";
  showError("statement-error", "");
  showError("statement-download-error", "");
}

// entriesPath is the BFF's route of the wallet's entries with query q.
function entriesPath(account, q) {
  // Ids are [A-Za-z0-9:_-]: the BFF matches them as they are.
  return "/api/internal-accounts/" + account + "/entries?" + q;
}

async function loadPage(cursor) {
  const account = walletAccountId();
  const generation = ++ctx.generation;
  const more = $("statement-more");
  // Where the focus goes back to: a disabled button may lose it.
  const focused = !!cursor && document.activeElement === more;
  more.disabled = true;
  if (cursor) ctx.more = true;
  $("statement-lines").setAttribute("aria-busy", "true");
  try {
    if (!account) throw new Error(t("statement.error.noAccount"));
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (cursor) q.set("cursor", cursor);
    const { data } = await api("GET", entriesPath(account, q));
    if (generation !== ctx.generation) return;
    const entries = data && Array.isArray(data.data) ? data.data : [];
    const before = cursor ? shownLines().length : 0;
    ctx.lines = addEntries(cursor ? ctx.lines : [], entries);
    ctx.pages = cursor ? ctx.pages + 1 : 1;
    ctx.cursor = data && data.hasMore && typeof data.nextCursor === "string" ? data.nextCursor : "";
    showError("statement-error", "");
    render();
    // "Load more" is gone once everything is shown: the focus goes on to
    // the first line that came rather than back to the top of the page.
    if (focused && !ctx.cursor) focusLine(Math.min(before, ctx.lines.length - 1));
  } catch (err) {
    if (generation !== ctx.generation) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    showError("statement-error", t("statement.error.load", { reason: messageOf(err) }));
  } finally {
    if (cursor) ctx.more = false;
    if (generation === ctx.generation) {
      more.disabled = false;
      $("statement-lines").removeAttribute("aria-busy");
      if (focused && !more.hidden && (document.activeElement === document.body || !document.activeElement)) more.focus();
    }
  }
}

/**
 * Adds entries (newest first, as the service lists them) to lines, one
 * line per ledger transaction: the entries of one transaction follow each
 * other, and a page may end inside one, so the first entry of a page may
 * complete the last line.
 *
 * @param {object[]} lines
 * @param {object[]} entries
 * @returns {object[]} the lines, a new array
 */
export function addEntries(lines, entries) {
  const out = lines.slice();
  for (const e of entries) {
    if (!e || typeof e !== "object") continue;
    const last = out[out.length - 1];
    const amount = Number.isFinite(e.amount) ? e.amount : 0;
    const held = e.side === "HELD" ? amount : 0;
    if (last && last.id === e.ledgerTransactionId) {
      out[out.length - 1] = { ...last, amount: last.amount + amount, held: last.held + held, entries: last.entries + 1 };
      continue;
    }
    out.push({
      id: String(e.ledgerTransactionId || e.id || ""),
      kind: String(e.kind || ""),
      transactionId: typeof e.transactionId === "string" ? e.transactionId : "",
      description: typeof e.description === "string" ? e.description : "",
      currency: String(e.currency || ""),
      createdAt: typeof e.createdAt === "string" ? e.createdAt : "",
      amount, // the change of the balance (available + held)
      held, // the change of the money on hold
      availableAfter: Number.isFinite(e.availableAfter) ? e.availableAfter : 0,
      heldAfter: Number.isFinite(e.heldAfter) ? e.heldAfter : 0,
      entries: 1,
    });
  }
  return out;
}

// shownLines are the lines to draw: while there is more, the last line
// may still lack entries of the next page (its amount would be half of
// it), so it waits for "Load more".
function shownLines() {
  return ctx.cursor ? ctx.lines.slice(0, -1) : ctx.lines;
}

function render() {
  const lines = shownLines();
  $("statement-lines").replaceChildren(...lines.map(row));
  $("statement-table").hidden = lines.length === 0;
  $("statement-empty").hidden = lines.length > 0 || !!ctx.cursor;
  $("statement-more").hidden = !ctx.cursor;
}

// row is one line of the table: what happened and when (the row's header,
// a link to the payment when there is one), the amount, the balance after.
function row(line) {
  const tr = document.createElement("tr");
  tr.dataset.ledgerTransaction = line.id;
  tr.dataset.kind = line.kind;
  tr.dataset.amount = String(line.amount);
  tr.dataset.balance = String(line.availableAfter + line.heldAfter);
  tr.dataset.held = String(line.heldAfter);
  const currency = currencyOf(line.currency);

  const what = document.createElement("th");
  what.scope = "row";
  what.tabIndex = -1; // the focus lands here after the last "Load more"
  let name;
  if (line.transactionId) {
    name = document.createElement("a");
    name.href = paths.payment(line.transactionId);
  } else {
    name = document.createElement("span");
  }
  name.className = "statement-what";
  name.textContent = describe(line);
  const when = document.createElement("time");
  when.className = "statement-when";
  when.dateTime = line.createdAt;
  when.textContent = formatTime(line.createdAt);
  what.append(name, when);

  const amount = document.createElement("td");
  amount.className = "num statement-amount";
  const money = document.createElement("span");
  money.className = "statement-money";
  if (line.amount === 0 && line.held !== 0) {
    // A move between the two sides: the balance stays, money goes on hold
    // or comes off it.
    money.textContent = formatMoney(Math.abs(line.held), currency);
    const note = document.createElement("span");
    note.className = "statement-note";
    note.textContent = t(line.held > 0 ? "statement.amount.toHold" : "statement.amount.fromHold");
    amount.append(money, note);
  } else {
    money.textContent = formatMoney(line.amount, currency, { signDisplay: "exceptZero" });
    amount.append(money);
  }

  const balance = document.createElement("td");
  balance.className = "num statement-balance";
  const total = document.createElement("span");
  total.className = "statement-money";
  total.textContent = formatMoney(line.availableAfter + line.heldAfter, currency);
  balance.append(total);
  if (line.heldAfter !== 0) {
    const held = document.createElement("span");
    held.className = "statement-note";
    held.textContent = t("statement.balance.held", { amount: formatMoney(line.heldAfter, currency) });
    balance.append(held);
  }
  tr.append(what, amount, balance);
  return tr;
}

function focusLine(i) {
  const th = $("statement-lines").querySelectorAll("tr > th")[i];
  if (th) th.focus({ preventScroll: false });
}

// describe is a line's kind in words; a kind the pages do not know yet
// shows the service's own description.
function describe(line) {
  if (Object.hasOwn(KINDS, line.kind)) return t(KINDS[line.kind]);
  return line.description || t("statement.kind.other");
}

// currencyOf is the wallet's Currency object when the line is in the
// wallet's currency (its decimals are the service's), else the code.
function currencyOf(code) {
  const wallet = walletCurrency();
  return wallet && wallet.code === code ? wallet : code;
}

function showError(id, text) {
  $(id).textContent = text;
  $(id).hidden = text === "";
}

// ---- a month as CSV ------------------------------------------------------------

/**
 * The months offered for download, newest first: {value: "2026-12", label:
 * "December 2026"}, from the month of now (UTC).
 *
 * @param {Date} now
 * @param {number} count
 * @returns {{value: string, label: string}[]}
 */
export function monthsBefore(now, count) {
  const names = new Intl.DateTimeFormat(getLocale(), { year: "numeric", month: "long", timeZone: "UTC" });
  const out = [];
  for (let i = 0; i < count; i++) {
    const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    out.push({ value: monthOf(first), label: names.format(first) });
  }
  return out;
}

// monthOf is "YYYY-MM" of a date, in UTC.
function monthOf(date) {
  return String(date.getUTCFullYear()).padStart(4, "0") + "-" + String(date.getUTCMonth() + 1).padStart(2, "0");
}

/**
 * The bounds of a month ("2026-12") as the service's filters take them:
 * createdAfter its first instant, createdBefore the first of the next
 * month (RFC 3339, UTC). null when month is not one.
 *
 * @param {string} month
 * @returns {{createdAfter: string, createdBefore: string} | null}
 */
export function monthBounds(month) {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(String(month));
  if (!m) return null;
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  const stamp = (d) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    createdAfter: stamp(new Date(Date.UTC(year, index, 1))),
    createdBefore: stamp(new Date(Date.UTC(year, index + 1, 1))),
  };
}

// fillMonths puts the months into the picker, keeping the one chosen.
function fillMonths() {
  const select = $("statement-month");
  const chosen = select.value;
  const months = monthsBefore(new Date(), MONTHS);
  select.replaceChildren(...months.map((m) => new Option(m.label, m.value)));
  if (months.some((m) => m.value === chosen)) select.value = chosen;
}

/**
 * The CSV file of lines (newest first, as addEntries makes them): one row
 * per line, oldest first, amounts in major units with a "." (format.js
 * decimalAmount), times as the service wrote them (RFC 3339, UTC), and the
 * column names in the language of the page.
 *
 * @param {object[]} lines
 * @returns {string}
 */
export function statementCSV(lines) {
  const header = [
    t("statement.csv.date"),
    t("statement.csv.description"),
    t("statement.csv.amount"),
    t("statement.csv.currency"),
    t("statement.csv.availableAfter"),
    t("statement.csv.heldAfter"),
    t("statement.csv.ledgerTransaction"),
    t("statement.csv.payment"),
  ];
  const rows = lines
    .slice()
    .reverse()
    .map((line) => {
      const currency = currencyOf(line.currency);
      return [
        line.createdAt,
        describe(line),
        decimalAmount(line.amount, currency),
        line.currency,
        decimalAmount(line.availableAfter, currency),
        decimalAmount(line.heldAfter, currency),
        line.id,
        line.transactionId,
      ];
    });
  return toCSV(header, rows, { numeric: [2, 4, 5] });
}

async function onDownload(event) {
  event.preventDefault();
  if (ctx.downloading) return;
  const month = $("statement-month").value;
  const bounds = monthBounds(month);
  const account = walletAccountId();
  const button = $("statement-download");
  const status = $("statement-download-status");
  showError("statement-download-error", "");
  if (!bounds) return showError("statement-download-error", t("statement.download.error.month"));
  if (!account) return showError("statement-download-error", t("statement.error.noAccount"));
  const label = $("statement-month").selectedOptions[0] ? $("statement-month").selectedOptions[0].textContent : month;
  ctx.downloading = true;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  status.textContent = t("statement.download.preparing", { month: label });
  const epoch = ctx.epoch;
  try {
    let lines = [];
    let cursor = "";
    let pages = 0;
    do {
      if (++pages > EXPORT_MAX_PAGES) throw new Error(t("statement.download.error.tooLong"));
      const q = new URLSearchParams({ limit: String(EXPORT_PAGE), ...bounds });
      if (cursor) q.set("cursor", cursor);
      const { data } = await api("GET", entriesPath(account, q));
      lines = addEntries(lines, data && Array.isArray(data.data) ? data.data : []);
      cursor = data && data.hasMore && typeof data.nextCursor === "string" ? data.nextCursor : "";
    } while (cursor);
    if (epoch !== ctx.epoch) return; // signed out meanwhile
    const name = "statement-" + month + ".csv";
    saveFile(statementCSV(lines), name, "text/csv;charset=utf-8");
    status.textContent = lines.length
      ? t("statement.download.done", { name, month: label, count: lines.length })
      : t("statement.download.doneEmpty", { name, month: label });
  } catch (err) {
    status.textContent = "";
    if (epoch !== ctx.epoch || (err instanceof ApiError && err.status === 401)) return;
    showError("statement-download-error", t("statement.download.error.failed", { reason: messageOf(err) }));
  } finally {
    ctx.downloading = false;
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

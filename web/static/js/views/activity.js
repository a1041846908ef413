// The Activity view (/activity): the wallet's history (GET
// /api/transactions, newest first, "Load more" with nextCursor, filtered by
// status), loaded while signed in whatever the view; its newest entries are
// Home's recent payments (onRecent).
//
// While the event stream carries the service's webhooks (events.js, wired
// by money.js), the list does not ask again by itself: an event about a
// payment makes it load again. While the stream is down, it asks again
// while a payment in it is on its way.
//
// Quotes that were never sent also have a transaction (PENDING, then
// EXPIRED); the list leaves them out: no money moved.

import { api, ApiError, messageOf } from "../api.js";
import { backoff } from "../backoff.js";
import { refreshBalance } from "../balance.js";
import { t } from "../i18n.js";
import { FINAL, forgetNames, listItem, onNamesChanged } from "../payments.js";

const $ = (id) => document.getElementById(id);

// The list asks again while a payment in it is on its way (ms, the last repeating).
const LIST_DELAYS = [3000, 5000, 10000, 15000];
const PAGE = 20;
// Home shows this many of the newest entries.
const RECENT = 4;

const ctx = {
  shown: false,
  items: [], // transactions loaded, in order
  cursor: "", // nextCursor of the last page, "" when there is no more
  pages: 0,
  loading: 0, // generation of the list being loaded
  watch: backoff(LIST_DELAYS), // the next look while a payment is on its way
  more: false, // "Load more" is under way
  filter: "", // the status the list shows, "" for every one
  recent: [], // the newest entries, unfiltered, for Home
  onRecent: [], // called when they change (onRecent)
  live: false, // the event stream carries the service's webhooks: no polling
};

/** Wires the list once. */
export function init() {
  $("transactions-refresh").addEventListener("click", () => reloadTransactions());
  $("transactions-more").addEventListener("click", onMore);
  $("transactions-filter").addEventListener("change", () => {
    ctx.filter = $("transactions-filter").value;
    reloadTransactions();
  });
  onNamesChanged(() => {
    if (ctx.shown) renderList();
  });
}

/** Signed in: shows the list and (re)loads its first page, unless more pages were asked for. */
export function signIn() {
  $("transactions").hidden = false;
  if (!ctx.shown || ctx.pages <= 1) {
    ctx.shown = true;
    reloadTransactions();
  }
}

/** Signed out: hides the list and forgets it (another person may sign in). */
export function signOut() {
  ctx.shown = false;
  ctx.loading++;
  stopWatching();
  ctx.more = false;
  ctx.items = [];
  ctx.cursor = "";
  ctx.pages = 0;
  forgetNames();
  ctx.filter = "";
  ctx.recent = [];
  $("transactions-filter").value = "";
  $("transactions").hidden = true;
  $("transactions-list").replaceChildren();
  $("transactions-empty").hidden = true;
  $("transactions-more").hidden = true;
  showListError("");
  renderRecent();
}

/**
 * Calls fn(recent, shown) whenever the newest entries change: recent, at
 * most four of them, unfiltered; shown: whether the list is loaded.
 */
export function onRecent(fn) {
  ctx.onRecent.push(fn);
}

/**
 * Says whether the event stream carries the service's webhooks. While it
 * does, the list does not poll; when it stops, it starts again.
 *
 * @param {boolean} live
 */
export function setListLive(live) {
  ctx.live = !!live;
  if (ctx.live) return;
  if (!ctx.watch.pending) watch();
}

/** Loads the first page of the list again (after a payment or a funding). */
export async function reloadTransactions() {
  if (!ctx.shown) return;
  await loadPage("");
}

// ---- the list -----------------------------------------------------------------

async function loadPage(cursor) {
  const generation = ++ctx.loading;
  const more = $("transactions-more");
  more.disabled = true;
  if (cursor) ctx.more = true;
  try {
    const items = [];
    let next = cursor;
    let pages = 0;
    // Quotes never sent are left out; keep going while a page showed nothing.
    do {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (next) q.set("cursor", next);
      if (ctx.filter) q.set("status", ctx.filter);
      const { data } = await api("GET", "/api/transactions?" + q);
      if (generation !== ctx.loading) return;
      const page = data && Array.isArray(data.data) ? data.data : [];
      items.push(...page);
      pages++;
      next = data && data.hasMore && typeof data.nextCursor === "string" ? data.nextCursor : "";
    } while (next && pages < 5 && !items.some(listed));
    const before = new Map(ctx.items.map((x) => [x.id, x.status]));
    ctx.items = cursor ? ctx.items.concat(items) : items;
    ctx.pages = cursor ? ctx.pages + pages : pages;
    ctx.cursor = next;
    if (!cursor && !ctx.filter) ctx.recent = items.filter(listed).slice(0, RECENT);
    showListError("");
    renderList();
    if (!cursor && ctx.filter) loadRecent(generation);
    // A payment of the list reached its end meanwhile: the balance moved.
    if (!cursor && items.some((x) => FINAL.has(x.status) && before.has(x.id) && !FINAL.has(before.get(x.id)))) {
      refreshBalance();
    }
    watch();
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    showListError(t("activity.error.load", { reason: messageOf(err) }));
  } finally {
    if (cursor) ctx.more = false;
    if (generation === ctx.loading) more.disabled = false;
  }
}

// loadRecent reads the newest entries for Home while the list shows only
// one status.
async function loadRecent(generation) {
  try {
    const { data } = await api("GET", "/api/transactions?" + new URLSearchParams({ limit: String(PAGE) }));
    if (generation !== ctx.loading) return;
    ctx.recent = (data && Array.isArray(data.data) ? data.data : []).filter(listed).slice(0, RECENT);
    renderRecent();
  } catch {
    // Home keeps what it showed; the next load tries again.
  }
}

function onMore() {
  if (ctx.cursor) loadPage(ctx.cursor);
}

// watch asks for the first page again while a payment in it is on its
// way, so that its status (and the balance) follow without a click. Not
// once more pages were loaded: that would fold them away.
function watch() {
  ctx.watch.stop();
  const moving = ctx.items.some((x) => x.status === "PROCESSING" || x.status === "CREATED" || x.status === "PENDING_AUTHORIZATION");
  if (!ctx.shown || !moving || ctx.pages > 1 || ctx.live) {
    ctx.watch.reset();
    return;
  }
  ctx.watch.later(() => {
    if (ctx.more) watch(); // not over a "Load more": look again later
    else if (ctx.shown && ctx.pages <= 1) loadPage("");
  });
}

function stopWatching() {
  ctx.watch.reset();
}

// listed: the list shows every transaction but quotes that were never sent.
function listed(x) {
  return !(x && x.type === "OUTGOING" && (x.status === "PENDING" || x.status === "EXPIRED"));
}

function renderList() {
  const shown = ctx.items.filter(listed);
  const list = $("transactions-list");
  // The list is drawn again as payments move: keep the keyboard focus on
  // the row it was on.
  const focused = list.contains(document.activeElement) && document.activeElement.dataset ? document.activeElement.dataset.open : "";
  list.replaceChildren(...shown.map(listItem));
  if (focused) {
    const again = list.querySelector('a[data-open="' + CSS.escape(focused) + '"]');
    if (again) again.focus({ preventScroll: true });
  }
  $("transactions-empty").textContent = t(ctx.filter ? "activity.list.emptyFiltered" : "activity.list.empty");
  $("transactions-empty").hidden = shown.length > 0 || !!ctx.cursor;
  $("transactions-more").hidden = !ctx.cursor;
  renderRecent();
}

// renderRecent tells Home the newest entries.
function renderRecent() {
  for (const fn of ctx.onRecent) fn(ctx.recent, ctx.shown);
}

function showListError(text) {
  $("transactions-error").textContent = text;
  $("transactions-error").hidden = text === "";
}

// The wallet's live events: an EventSource on GET /api/events, where the
// BFF passes on the service's webhooks for this customer (DESIGN.md
// "Events"). Each event is named by its webhook type (OUTGOING_PAYMENT.
// COMPLETED, INTERNAL_ACCOUNT.BALANCE_UPDATED, …) and carries the webhook's
// envelope {id, type, timestamp, data, sequence}; "resync" says that events
// may have been missed, "signed-out" that the cookie's session ended.
//
// Polling stays as the fallback: the page counts the stream as live only
// while it is open AND has carried at least one event since it opened (a
// BFF whose service sends no webhooks opens a stream that stays silent),
// and tells money.js whenever that changes, so that the transaction view
// and the list ask the BFF themselves again while the stream is down.
// EventSource reconnects by itself after a network failure (with
// Last-Event-ID, so the BFF sends what was missed); after a refusal (a 401,
// a 502) it gives up, and this module asks GET /api/me (a 401 there signs
// the page out as any other) and opens a new one later. Nothing of this is
// shown to the person.

import { api, ApiError, signalSignedOut } from "./api.js";

// The webhook types the page acts on (the reference API's WebhookType).
const PAYMENT_EVENTS = [
  "OUTGOING_PAYMENT.PENDING",
  "OUTGOING_PAYMENT.PENDING_AUTHORIZATION",
  "OUTGOING_PAYMENT.PROCESSING",
  "OUTGOING_PAYMENT.COMPLETED",
  "OUTGOING_PAYMENT.FAILED",
  "OUTGOING_PAYMENT.EXPIRED",
  "OUTGOING_PAYMENT.REFUND_PENDING",
  "OUTGOING_PAYMENT.REFUND_COMPLETED",
  "OUTGOING_PAYMENT.REFUND_FAILED",
  "INCOMING_PAYMENT.PENDING",
  "INCOMING_PAYMENT.COMPLETED",
  "INCOMING_PAYMENT.FAILED",
  "INCOMING_PAYMENT.REFUND_PENDING",
  "INCOMING_PAYMENT.REFUND_COMPLETED",
  "INCOMING_PAYMENT.REFUND_FAILED",
];
const BALANCE_EVENTS = ["INTERNAL_ACCOUNT.BALANCE_UPDATED"];
const OTHER_EVENTS = ["INTERNAL_ACCOUNT.STATUS_UPDATED", "EXTERNAL_ACCOUNT.STATUS_UPDATED"];

// After a refused stream: wait this long before the next (doubling).
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 60000;

const ctx = {
  handlers: null, // {onPayment, onBalance, onResync, onLive}; null when stopped
  source: null, // the EventSource
  opens: 0, // times a stream of this start opened
  carried: false, // the open stream carried an event
  live: false,
  timer: 0,
  delay: 0,
  parked: false, // closed while the page sits in the back/forward cache
};

// A page left for another (a link followed, back, forward, an address
// typed) may be kept whole in the browser's back/forward cache, stream
// included. Over HTTP/1.1 each such stream holds one of the six
// connections a browser allows one site, and after five of them the next
// page load waited until one timed out (close to a minute). So the stream
// closes when the page is hidden that way, and opens again, reading the
// state afresh, if the page is shown from the cache.
if (typeof window === "object" && typeof window.addEventListener === "function") {
  window.addEventListener("pagehide", () => {
    if (!ctx.source) return;
    ctx.source.close();
    ctx.source = null;
    ctx.parked = true;
    ctx.carried = false;
    setLive(false);
  });
  window.addEventListener("pageshow", (event) => {
    if (!event.persisted || !ctx.parked) return;
    ctx.parked = false;
    if (!ctx.handlers || ctx.source || ctx.timer) return;
    connect();
    ctx.handlers.onResync();
  });
}

/**
 * Opens the stream, unless it is open. handlers: onPayment(transaction,
 * type) and onBalance(account, type) for the events, onResync() when events
 * may have been missed, onLive(live) when the stream starts or stops
 * carrying events.
 *
 * @param {{onPayment: Function, onBalance: Function, onResync: Function, onLive: Function}} handlers
 */
export function startEvents(handlers) {
  ctx.handlers = handlers;
  if (ctx.source || ctx.timer) return;
  ctx.opens = 0;
  connect();
}

/** Closes the stream (signed out, or another person signs in). */
export function stopEvents() {
  const handlers = ctx.handlers;
  ctx.handlers = null;
  if (ctx.source) ctx.source.close();
  ctx.source = null;
  clearTimeout(ctx.timer);
  ctx.timer = 0;
  ctx.delay = 0;
  ctx.carried = false;
  ctx.parked = false;
  if (ctx.live && handlers) handlers.onLive(false);
  ctx.live = false;
}

/** Whether the stream is open and carrying events. */
export function eventsLive() {
  return ctx.live;
}

function connect() {
  if (typeof EventSource !== "function" || !ctx.handlers) return;
  const es = new EventSource("/api/events");
  ctx.source = es;
  ctx.carried = false;
  const mine = (fn) => (event) => {
    if (es === ctx.source && ctx.handlers) fn(event);
  };
  es.addEventListener("open", mine(() => {
    ctx.delay = 0;
    if (ctx.opens++ > 0) ctx.handlers.onResync(); // back after a break
  }));
  es.addEventListener("error", mine(() => onError(es)));
  for (const type of PAYMENT_EVENTS) {
    es.addEventListener(type, mine((event) => {
      const data = dataOf(event);
      carried();
      if (data) ctx.handlers.onPayment(data, type);
    }));
  }
  for (const type of BALANCE_EVENTS) {
    es.addEventListener(type, mine((event) => {
      const data = dataOf(event);
      carried();
      if (data) ctx.handlers.onBalance(data, type);
    }));
  }
  for (const type of OTHER_EVENTS) es.addEventListener(type, mine(carried));
  es.addEventListener("resync", mine(() => ctx.handlers.onResync()));
  es.addEventListener("signed-out", mine(() => {
    stopEvents();
    signalSignedOut();
  }));
}

// dataOf is the resource of a webhook event (its envelope's data), or null.
function dataOf(event) {
  try {
    const envelope = JSON.parse(event.data);
    return envelope && typeof envelope.data === "object" && envelope.data !== null ? envelope.data : null;
  } catch {
    return null;
  }
}

function carried() {
  ctx.carried = true;
  setLive(true);
}

function setLive(live) {
  if (ctx.live === live) return;
  ctx.live = live;
  if (ctx.handlers) ctx.handlers.onLive(live);
}

function onError(es) {
  ctx.carried = false;
  setLive(false);
  if (es.readyState !== EventSource.CLOSED) return; // reconnecting by itself
  // Refused: find out whether the page is still signed in, then try again.
  es.close();
  ctx.source = null;
  ctx.delay = ctx.delay ? Math.min(ctx.delay * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
  ctx.timer = setTimeout(retry, ctx.delay);
}

async function retry() {
  ctx.timer = 0;
  if (!ctx.handlers) return;
  try {
    await api("GET", "/api/me");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return; // signed out: api.js tells the page
  }
  if (ctx.handlers && !ctx.source && !ctx.timer) connect();
}

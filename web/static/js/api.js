// Fetch wrapper for the BFF's /api. Every call is same-origin, carries the
// X-CSRF header the BFF requires and a fresh W3C traceparent (so that a
// trace of the BFF and the service starts at the person's click), sends and
// expects JSON, and turns an error answer ({status, code, message, details,
// requestId}) into an ApiError.

import { t } from "./i18n.js";

let signedOutHandler = null;

/**
 * Registers the one function called when the BFF answers 401 to anything
 * but the login steps: the cookie session is gone (expired, revoked, signed
 * out in another tab), so the page must drop its key and show the login.
 * A 401 from /api/login/... is about the code or the signature instead, and
 * is left to the caller.
 *
 * @param {() => void} fn
 */
export function onSignedOut(fn) {
  signedOutHandler = fn;
}

/**
 * Tells the page that the cookie session is gone, as a 401 from the BFF
 * does: the event stream's "signed-out" (events.js).
 */
export function signalSignedOut() {
  if (signedOutHandler) signedOutHandler();
}

/** An error answer of the BFF or the service behind it. */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 when the server could not be reached)
   * @param {string} code machine code such as "INVALID_INPUT"
   * @param {string} message human-readable message
   * @param {object} [details] details, e.g. {errors: [{field, message}]}
   * @param {number} [retryAfter] seconds from the Retry-After header
   * @param {string} [requestId] the answer's Request-Id, to quote to support
   */
  constructor(status, code, message, details, retryAfter, requestId) {
    super(message || code);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
  }

  /** The per-field errors of a 400 INVALID_INPUT, as {field: message}. */
  fieldErrors() {
    const out = {};
    const list = this.details && Array.isArray(this.details.errors) ? this.details.errors : [];
    for (const e of list) {
      if (e && typeof e.field === "string" && !(e.field in out)) out[e.field] = String(e.message || t("app.error.fieldInvalid"));
    }
    return out;
  }
}

/**
 * A fresh W3C Trace Context traceparent: version 00, a random 16-byte trace
 * id, a random 8-byte parent (span) id, sampled. Each API call starts a
 * trace of its own: the BFF's spans and the service's continue it.
 *
 * @returns {string} "00-<32 hex>-<16 hex>-01"
 */
export function newTraceparent() {
  const hex = (n) => {
    const b = crypto.getRandomValues(new Uint8Array(n));
    if (b.every((x) => x === 0)) b[n - 1] = 1; // all zeros is invalid
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  };
  return "00-" + hex(16) + "-" + hex(8) + "-01";
}

/**
 * Calls the BFF.
 *
 * @param {string} method "GET", "POST", …
 * @param {string} path an /api path, e.g. "/api/me"
 * @param {{body?: object|string, headers?: object}} [options] body is sent
 *   as JSON; a string is sent as is (so that a signed retry repeats the exact
 *   bytes)
 * @returns {Promise<{status: number, data: any}>}
 */
export async function api(method, path, options = {}) {
  if (typeof path !== "string" || !path.startsWith("/api/")) {
    throw new TypeError("api: path must start with /api/");
  }
  const headers = { "X-CSRF": "1", Accept: "application/json", traceparent: newTraceparent(), ...(options.headers || {}) };
  const init = { method, headers, credentials: "same-origin", cache: "no-store", redirect: "error" };
  if (options.body !== undefined) {
    init.body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }

  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, "NETWORK_ERROR", t("app.error.network"));
  }
  const text = await res.text();
  let data = null;
  if (text !== "") {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  // GET /api/me answers {"signedIn": false} when nobody is signed in (an
  // answer, not an error, so that the browser logs no failed request): to
  // the pages it is the 401 it stands for.
  let status = res.status;
  if (path === "/api/me" && status === 200 && data && data.signedIn === false) {
    status = 401;
    data = { status, code: "UNAUTHORIZED", message: "not signed in" };
  }
  // A 401 UNAUTHORIZED means the browser is signed out. The 401s of a
  // signed retry (WALLET_SIGNATURE_*, REQUEST_ID_MISSING) only refuse that
  // one call.
  const code = data && typeof data === "object" && typeof data.code === "string" ? data.code : "";
  if (status === 401 && (code === "" || code === "UNAUTHORIZED") && !path.startsWith("/api/login/") && signedOutHandler) {
    signedOutHandler();
  }
  if (status < 200 || status > 299) {
    const retry = Number.parseInt(res.headers.get("Retry-After") || "", 10);
    const body = data && typeof data === "object" ? data : {};
    throw new ApiError(
      status,
      typeof body.code === "string" ? body.code : "HTTP_" + status,
      typeof body.message === "string" ? body.message : res.statusText || t("app.error.requestFailed"),
      body.details,
      Number.isFinite(retry) ? retry : undefined,
      typeof body.requestId === "string" ? body.requestId : res.headers.get("Request-Id") || undefined,
    );
  }
  return { status: res.status, data };
}

/**
 * The words to show a person for an error: the service's message, or a
 * plain sentence when the service could not be reached. A 503 is a
 * database that went away for a moment (a failover, the BFF's or the
 * service's): trying again is safe (nothing is done twice) and soon works.
 *
 * @param {unknown} err
 * @returns {string}
 */
export function messageOf(err) {
  if (err instanceof ApiError) {
    if (err.status === 503) return t("app.error.unavailable");
    if (err.status === 0 || err.status >= 500) return t("app.error.serviceDown");
    return err.message;
  }
  return err && err.message ? err.message : String(err);
}

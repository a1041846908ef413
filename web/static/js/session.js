// This tab's wallet session: its signing key, kept for the session and
// resumed by a reload or another tab, the refresh before the session ends,
// and the end of the session (sign-out, expiry, a 401, another tab).
//
// Tabs share the cookie, so they share one session and one stored key
// (DESIGN.md "Trust boundaries"):
//   - A tab that starts (a reload, a new tab, a browser restart) or comes back
//     into view asks GET /api/me; if it holds no key, it resumes the stored one
//     (paywallet.resumeSession) when that key is the session's, and deletes a
//     stored key of any other session. A tab that is signed in by the cookie
//     but cannot get the session's key shows the sign-in page: it could not
//     sign anything.
//   - The refresh before the session ends runs under the Web Lock
//     "paywallet-session-refresh": the tab that holds it first looks at the
//     stored key, and if another tab has already refreshed, takes that key
//     instead of refreshing again. The tab that refreshes stores the new key
//     and tells the others on the BroadcastChannel "wallet", which resume it.
//   - Signing out, a revoked or expired session, a 401 from the BFF: the
//     stored key is deleted, this tab's handle is wiped, and the other tabs
//     are told ("logout"), so that each shows the sign-in page.
// Where the browser refuses to keep keys (IndexedDB missing or failing, as
// in some private windows), the key stays in this tab's memory only, the
// page says so once, and everything else works as before.
//
// The page (app.js) says how it is drawn (setSessionPage): the sign-in
// page, the signed-in page for GET /api/me's answer, the status line, and
// the views forgetting what they showed. state is shared with the sign-in
// flows of app.js, which start a session (newKey, keepKey, tell("login")).

import { api, ApiError, messageOf } from "./api.js";
import { getLocale, t } from "./i18n.js";
import { formatCountdown, shortKey } from "./format.js";
import { confirmStepUp } from "./stepup.js";

const $ = (id) => document.getElementById(id);

// What the page draws, set by app.js.
const page = { showLogin() {}, showSignedIn() {}, setStatus() {}, signOutViews() {} };

/** Sets how the page is drawn: {showLogin, showSignedIn, setStatus, signOutViews}. */
export function setSessionPage(hooks) {
  Object.assign(page, hooks);
}

export const showLogin = (options) => page.showLogin(options);
const showSignedIn = (me, options) => page.showSignedIn(me, options);
export const setStatus = (text) => page.setStatus(text);
const signOutViews = () => page.signOutViews();

export const state = {
  config: null, // GET /api/config
  wallet: null, // Promise of the wallet module's client (wallet.js), once its load has begun
  walletReady: false, // the module has reported it is ready
  // This tab's key: {handle, publicKey, sessionId, kept}, or null. sessionId
  // once the login completed; kept is true once the key is stored in
  // IndexedDB, false when the browser refused to keep it.
  key: null,
  // While the signed-in view is drawn before the module has resumed this
  // tab's key (draw first, keys after): a Promise that settles when the key
  // is known, present or not. Actions that need the key wait for it.
  keyPending: null,
  epoch: 0, // counts the times this tab left its session (endHere): a resume started before is void
  sessionId: "", // the cookie's wallet session, as GET /api/me last said
  login: null, // {bundle, email} between start and verify
  oauth: null, // AbortController of a wait for the provider's sign-in window
  oauthStatus: "", // the status line shown while waiting for that window
  signedIn: false, // the signed-in view is shown
  deadline: 0, // performance.now() at which the wallet session ends; 0 when unknown
  timer: 0,
  resendUntil: 0, // performance.now() until which "Send a new code" waits (429 Retry-After)
  resendTimer: 0,
  refreshing: false, // a session refresh is under way
  refreshAfter: 0, // performance.now() before which a failed refresh is not tried again
};

// The session is refreshed this long before it ends, with a new key: the
// person keeps working and the old key signs for nothing any more.
const REFRESH_AHEAD_MS = 90 * 1000;

const REFRESH_RETRY_MS = 15 * 1000;

// How long Sign out waits for a key still being resumed before it signs
// out without it (the wallet session then lapses on its own).
const LOGOUT_KEY_WAIT_MS = 5000;

// The Web Lock the tabs of this origin take to refresh the one session.
const REFRESH_LOCK = "paywallet-session-refresh";

// The other tabs of this wallet. Messages: {type: "login"}, {type:
// "refresh"}, {type: "logout", sessionId}.
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("wallet") : null;

/** Starts following what the other tabs of this wallet say. */
export function followOtherTabs() {
  if (channel) channel.onmessage = (event) => onOtherTab(event.data);
}

export function tell(type, fields = {}) {
  if (channel) channel.postMessage({ type, ...fields });
}

export function delay(ms) {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}

// meNow starts GET /api/me and returns the Promise of its outcome, as
// showCurrent takes it ({me} or {err}).
export function meNow() {
  return api("GET", "/api/me").then(
    (res) => ({ me: res.data }),
    (err) => ({ err }),
  );
}

// firstPaint resolves once the page has painted its first view (just
// after the frame that follows the first showLogin or showSignedIn), or a
// second after that in a tab that does not paint (hidden, or in the
// background). The wallet module's load waits for it: the page's own
// requests and its first frame go first.
export let painted;

export const firstPaint = new Promise((resolve) => {
  painted = () => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 1000);
    painted = () => {};
  };
});

// configured settles with GET /api/config's answer, which names the
// module's content-hashed URLs.
export const configured = {};

configured.promise = new Promise((resolve, reject) => Object.assign(configured, { resolve, reject }));

configured.promise.catch(() => {}); // reported by start

// yieldToPage lets the browser run what is waiting (input, rendering,
// network answers) before the caller goes on.
export function yieldToPage() {
  if (typeof scheduler === "object" && scheduler && typeof scheduler.yield === "function") return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// walletModule returns the Promise of the wallet module's client. The
// first call begins its load (wallet.js, the Worker, the module), which
// waits for the configuration and for the page's first paint, whoever
// asks first. A failure stays for the page's life (the page says to
// reload it).
export function walletModule() {
  if (!state.wallet) {
    // A dynamic import, so that a missing or broken wallet.js leaves the page
    // usable enough to say what is wrong. Evaluating wallet.js and making
    // the Worker are two tasks, not one: on a slow phone each is short.
    state.wallet = Promise.all([configured.promise, firstPaint])
      .then(() => import("./wallet.js"))
      .then(async (m) => {
        await yieldToPage();
        return m.loadWallet(state.config.wasmUrl, { wasmExecUrl: state.config.wasmExecUrl });
      });
    state.wallet.then(
      () => {
        state.walletReady = true;
      },
      () => {}, // reported when something needs it
    );
  }
  return state.wallet;
}

// walletFor is the module for an action the person asked for: the status
// line says "getting your keys ready" while it is not ready yet.
export async function walletFor() {
  if (state.walletReady) return walletModule();
  return whileKeysLoad(walletModule());
}

// whileKeysLoad says "getting your keys ready" on the status line until
// promise settles, then puts back what it said before.
export async function whileKeysLoad(promise) {
  const before = $("status").textContent;
  const text = t("app.status.keysLoading");
  setStatus(text);
  try {
    return await promise;
  } finally {
    if ($("status").textContent === text) setStatus(before);
  }
}

// keyReady is this tab's session key for an action that needs it: at once
// when it is known, after the module has resumed it when that is under
// way (saying so meanwhile); null when this tab has none.
export async function keyReady() {
  if (state.keyPending) await whileKeysLoad(state.keyPending);
  return state.key && state.key.sessionId ? state.key : null;
}

// loadedWallet is the wallet module, or null when it did not load.
export async function loadedWallet() {
  try {
    return await walletModule();
  } catch {
    return null;
  }
}

// The held actions of signed calls, in the person's words.
const ACTION_WORDS = {
  RECOVERY_PHRASE_EXPORT: "stepup.what.recoveryPhraseExport",
  SIGN_IN_METHOD_ADD: "stepup.what.signInMethodAdd",
  SIGN_IN_METHOD_REMOVE: "stepup.what.signInMethodRemove",
  EMAIL_CHANGE: "stepup.what.emailChange",
  LIMITS_LOOSEN: "stepup.what.limitsLoosen",
  TRANSFER: "stepup.what.transfer",
};

function actionWords(action) {
  return t(ACTION_WORDS[action] || "stepup.what.other");
}

/**
 * Runs a signed-retry operation with this tab's session key and returns the
 * answer of the signed call (DESIGN.md "Signed retry"): the first call
 * answers 202 {payloadToSign, requestId}; the wallet module stamps
 * payloadToSign with this tab's session key; the same call, with the same
 * body bytes, is sent again with Service-Wallet-Signature and Request-Id.
 * Every account operation of a session uses it (refresh, sign-out, the
 * Security view's).
 *
 * @param {string} method
 * @param {string} path an /api path
 * @param {object} [body] sent as the same JSON bytes on both legs
 * @returns {Promise<{status: number, data: any}>}
 */
export async function signedRetry(method, path, body) {
  const key = (state.key && state.key.sessionId ? state.key : null) || (await keyReady());
  if (!key) throw new Error(t("app.error.noKey"));
  const wallet = await walletModule();
  const options = body === undefined ? {} : { body: JSON.stringify(body) };
  const first = await api(method, path, options);
  if (first.status !== 202 || !first.data || typeof first.data.payloadToSign !== "string") {
    throw new Error("unexpected answer " + first.status + " to " + method + " " + path);
  }
  // An action the service holds for the person's confirmation (stepup.js)
  // is confirmed before it is signed; cancelled, it throws StepUpCancelled.
  const sca = first.data.scaChallenge;
  if (sca) {
    await confirmStepUp(sca, {
      authorizePath: "/api/sca/challenges/" + sca.id + "/authorize",
      resendPath: "/api/sca/challenges/" + sca.id + "/resend",
      what: actionWords(sca.action),
    });
  }
  const stamp = await wallet.stamp(key.handle, first.data.payloadToSign);
  return api(method, path, {
    ...options,
    headers: { "Service-Wallet-Signature": stamp, "Request-Id": first.data.requestId },
  });
}

// showCurrent asks the BFF who is signed in (or takes the answer started
// already, as meNow returns it) and shows the matching view.
//
// Draw first, keys after: when the BFF says a session is signed in and
// this tab's key is not known yet (the page is starting, the module still
// loading), the wallet is shown at once from the BFF's data, and the key is
// resumed behind it. Should the key turn out not to be here, the sign-in
// page replaces the wallet, as it would have been shown at once before.
export async function showCurrent(answer) {
  const { me, err } = await (answer || meNow());
  if (err) {
    showLogin();
    if (err instanceof ApiError && err.status === 401) {
      await firstPaint;
      await dropStaleKey();
    } else {
      setStatus(t("app.error.sessionCheck", { reason: messageOf(err) }));
    }
    return;
  }
  const id = (me && me.session && me.session.id) || "";
  if (!state.key && id && !state.walletReady && !state.keyPending) {
    await drawBeforeKey(me);
    return;
  }
  await syncKey(me);
  await showMe(me);
}

// drawBeforeKey shows the signed-in view for me at once, then resumes this
// tab's key (which loads the module) and settles what the view says about
// it.
export async function drawBeforeKey(me) {
  const epoch = state.epoch;
  let settle;
  const pending = new Promise((resolve) => {
    settle = resolve;
  });
  state.keyPending = pending;
  state.sessionId = me.session.id;
  try {
    showSignedIn(me);
    await firstPaint;
    if (epoch === state.epoch) await syncKey(me);
  } finally {
    if (state.keyPending === pending) state.keyPending = null;
    settle();
  }
  if (epoch !== state.epoch) {
    // This tab left the session meanwhile (signed out, a 401, another tab's
    // sign-out). A key resumed for it after that is the ended session's:
    // wipe it and its stored copy.
    const key = state.key;
    if (key && key.sessionId === me.session.id) {
      state.key = null;
      showKeyKept();
      await forgetHandle(key.handle);
      await dropStored(key.sessionId);
    }
    return;
  }
  if (!state.signedIn) return;
  if (state.key || !(await loadedWallet())) {
    showKey(me);
  } else {
    showLogin();
    setStatus(t("app.status.notKeptHere"));
  }
  document.dispatchEvent(new CustomEvent("wallet:key"));
}

// dropStaleKey deletes the stored key when nobody is signed in here (the
// cookie ended with the browser, or expired): it signs for nothing this
// browser can reach. The BFF is asked again once the stored key is known,
// and only that key is deleted, so that a login another tab completes
// meanwhile keeps its own.
export async function dropStaleKey() {
  const stored = await resumeStored();
  if (!stored) return;
  await forgetHandle(stored.handle);
  try {
    await api("GET", "/api/me");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) await dropStored(stored.sessionId);
    return;
  }
  await showCurrent(); // signed in meanwhile, in another tab
}

// refresh updates the view from GET /api/me without moving the focus. A
// 401 ends the session (onSignedOut); a network failure changes nothing.
export async function refresh() {
  let me;
  try {
    me = (await api("GET", "/api/me")).data;
  } catch {
    return; // Signed out: handled by onSignedOut. Unreachable: try again next time.
  }
  const wasSignedIn = state.signedIn;
  await syncKey(me);
  if (wasSignedIn || state.key) await showMe(me, { quiet: wasSignedIn });
}

// showMe shows the signed-in view for me if this tab can sign for its
// session. Without the session's key it shows the sign-in page instead (the
// cookie session is left to the tabs that hold the key); only a tab whose
// wallet module did not load shows the wallet without a key, to look at.
export async function showMe(me, options = {}) {
  state.sessionId = (me && me.session && me.session.id) || "";
  if (state.key || !(await loadedWallet())) {
    showSignedIn(me, options);
    return;
  }
  if (state.signedIn || !options.quiet) {
    showLogin();
    setStatus(t("app.status.notKeptHere"));
  }
}

// Key changes of this tab (resume, adopt, refresh) take turns: two of them
// at once would leave a handle behind or adopt a key twice.
let keyTurn = Promise.resolve();

export function withKeys(fn) {
  const run = keyTurn.then(() => fn());
  keyTurn = run.catch(() => {});
  return run;
}

export function syncKey(me) {
  return withKeys(() => syncKeyNow(me));
}

// syncKeyNow makes this tab's key the signing key of the session the BFF
// reports, or none: a key of another session (another tab signed in, or
// refreshed, since) is wiped; without a key, the stored one is resumed if
// it is this session's, and deleted if it is not.
export async function syncKeyNow(me) {
  const id = (me && me.session && me.session.id) || "";
  if (state.key && (!state.key.sessionId || state.key.sessionId !== id)) await forgetKey();
  if (state.key || !id) return;
  const epoch = state.epoch;
  const stored = await resumeStored();
  if (!stored) return;
  if (stored.sessionId !== id && epoch === state.epoch && !state.key) {
    // Another tab may have refreshed or signed in since me was read (this
    // tab's module can take half a second to load): ask again before
    // deleting what may be the newer session's key.
    const now = await currentSessionId();
    if (now === stored.sessionId && epoch === state.epoch && !state.key) {
      state.key = { handle: stored.handle, publicKey: stored.publicKey, sessionId: stored.sessionId, kept: true };
      showKeyKept();
      return;
    }
    await forgetHandle(stored.handle);
    if (now !== null) await dropStored(stored.sessionId); // signed out, or another session: stale
    return;
  }
  if (stored.sessionId !== id || epoch !== state.epoch || state.key) {
    await forgetHandle(stored.handle);
    return;
  }
  state.key = { handle: stored.handle, publicKey: stored.publicKey, sessionId: stored.sessionId, kept: true };
  showKeyKept();
}

// currentSessionId asks the BFF which wallet session the cookie holds now:
// its id, "" when signed out, null when the BFF could not be reached (then
// nothing is deleted).
export async function currentSessionId() {
  try {
    const me = (await api("GET", "/api/me")).data;
    return (me && me.session && me.session.id) || "";
  } catch (err) {
    return err instanceof ApiError && err.status === 401 ? "" : null;
  }
}

// resumeStored returns the stored session key under a new handle of this
// tab, or null when there is none or the browser keeps none.
export async function resumeStored() {
  const wallet = await loadedWallet();
  if (!wallet || typeof wallet.resumeSession !== "function") return null;
  try {
    const stored = await wallet.resumeSession();
    if (!stored || typeof stored.handle !== "string") return null;
    if (typeof stored.sessionId !== "string" || typeof stored.publicKey !== "string") {
      await forgetHandle(stored.handle);
      return null;
    }
    return stored;
  } catch {
    return null;
  }
}

// keepKey stores key (whose login or refresh answered session) for the
// session's lifetime, so that a reload or another tab can resume it. A
// browser that refuses keeps the key in this tab only, and the page says so.
export async function keepKey(key, session) {
  let kept = false;
  const expiresAtMs = expiresAtOf(session);
  const wallet = await loadedWallet();
  if (wallet && typeof wallet.storeSession === "function" && expiresAtMs > Date.now()) {
    try {
      kept = (await wallet.storeSession(key.handle, { sessionId: key.sessionId, expiresAtMs })) === true;
    } catch {
      kept = false;
    }
  }
  key.kept = kept;
  showKeyKept();
}

// expiresAtOf is the Date.now() time at which session ends: from expiresIn
// (GET /api/me), else the lifetime between createdAt and expiresAt counted
// from now (a Session), so that a device clock that is off does not matter.
export function expiresAtOf(session) {
  if (!session) return 0;
  if (typeof session.expiresIn === "number" && Number.isFinite(session.expiresIn) && session.expiresIn >= 0) {
    return Date.now() + session.expiresIn * 1000;
  }
  const end = Date.parse(session.expiresAt);
  const begin = Date.parse(session.createdAt);
  if (Number.isFinite(end) && Number.isFinite(begin) && end > begin) return Date.now() + (end - begin);
  return Number.isFinite(end) ? end : 0;
}

// dropStored deletes the stored session key: the one of sessionId only,
// or whichever is stored when sessionId is empty.
export async function dropStored(sessionId) {
  const wallet = await loadedWallet();
  if (!wallet || typeof wallet.deleteSession !== "function") return;
  try {
    await (sessionId ? wallet.deleteSession(sessionId) : wallet.deleteSession());
  } catch {
    // Nothing can be stored where nothing can be deleted.
  }
}

// showKeyKept shows, while this tab's key could not be kept, why a reload
// would sign the person out.
export function showKeyKept() {
  $("key-not-kept").hidden = !(state.key && state.key.sessionId && state.key.kept === false);
}

export async function onOtherTab(message) {
  const type = typeof message === "string" ? message : message && message.type;
  if (type === "logout") {
    const id = message && typeof message.sessionId === "string" ? message.sessionId : "";
    if (state.signedIn && id && state.sessionId && id !== state.sessionId) {
      // The end of a session this tab no longer shows: ask the BFF.
      await refresh();
    } else if (state.signedIn || state.login || state.key) {
      await endHere(t("app.status.otherTabSignedOut"));
    }
  } else if (type === "refresh") {
    // Another tab refreshed the session: the cookie follows the new one,
    // and the new key is stored: take it.
    if (state.signedIn) await refresh();
  } else if (type === "login") {
    // The cookie now holds the other tab's session: a login in progress
    // here is void, and a key of this tab signs for nothing.
    state.login = null;
    await forgetKey();
    signOutViews(); // they may be another customer's now
    await showCurrent();
  }
}

// endHere leaves the signed-in (or half-signed-in) state in this tab only:
// the login is shown at once, then the key is wiped and the stored one of
// its session deleted.
export async function endHere(message) {
  stopCountdown();
  state.epoch++;
  state.signedIn = false;
  state.deadline = 0;
  state.sessionId = "";
  state.login = null;
  const key = state.key;
  state.key = null;
  showKeyKept();
  showLogin();
  setStatus(message);
  if (!key) return;
  await forgetHandle(key.handle);
  if (key.sessionId) await dropStored(key.sessionId);
}

// newKey makes a new signing key for a login (e-mail code, passkey and
// OAuth alike: the client-held session key is sent compressed).
export async function newKey(wallet) {
  await forgetKey();
  const key = await wallet.generateKey("signing");
  state.key = { handle: key.handle, publicKey: key.publicKey };
}

// forgetKey wipes this tab's handle of its key. The stored key, if any, is
// left alone: other tabs may use it (endHere deletes it).
export async function forgetKey() {
  const key = state.key;
  state.key = null;
  showKeyKept();
  if (key) await forgetHandle(key.handle);
}

export async function forgetHandle(handle) {
  try {
    const wallet = await walletModule();
    await wallet.forget(handle);
  } catch {
    // The module is gone or never loaded, or the handle expired: there is
    // nothing left to wipe.
  }
}

// showKey shows what this tab's key is (its public key, or why there is
// none, or that it is being got ready), and has the module wipe it when
// the session ends.
export function showKey(me) {
  const keyEl = $("session-public-key");
  if (state.key) {
    keyEl.textContent = shortKey(state.key.publicKey);
    keyEl.title = state.key.publicKey;
    keyEl.dataset.value = state.key.publicKey;
    $("copy-key").hidden = false;
    $("key-missing").hidden = true;
  } else {
    keyEl.textContent = t(state.keyPending ? "security.facts.keyLoading" : "security.facts.keyMissing");
    keyEl.removeAttribute("title");
    keyEl.dataset.value = "";
    $("copy-key").hidden = true;
    $("key-missing").hidden = !!state.keyPending;
  }
  showKeyKept();
  // The key is wiped inside the wallet module when the session ends, even
  // if this page's timers are asleep then.
  const session = (me && me.session) || {};
  const left = session.expiresIn;
  const key = state.key;
  if (key && key.sessionId === session.id && typeof left === "number" && Number.isFinite(left) && left >= 0) {
    walletModule()
      .then((w) => w.setExpiry(key.handle, Date.now() + left * 1000))
      .catch(() => {});
  }
}

export function startCountdown() {
  stopCountdown();
  tick();
  state.timer = setInterval(tick, 1000);
}

export function stopCountdown() {
  if (state.timer) clearInterval(state.timer);
  state.timer = 0;
}

export function tick() {
  if (!state.deadline) {
    $("session-expiry").textContent = t("security.facts.unknown");
    return;
  }
  const now = performance.now();
  const left = state.deadline - now;
  $("session-expiry").textContent = formatCountdown(left);
  if (left <= 0) {
    expire();
  } else if (left < REFRESH_AHEAD_MS && state.key && state.key.sessionId && !state.refreshing && now >= state.refreshAfter) {
    refreshSession();
  }
}

// expire runs when the countdown reaches zero. Another tab may have
// refreshed the session meanwhile, so the BFF is asked first.
export async function expire() {
  stopCountdown();
  await refresh();
  if (!state.signedIn) return; // the BFF's 401 ended it already
  if (state.deadline > performance.now()) {
    startCountdown();
    return;
  }
  await endEverywhere(t("app.status.sessionEnded"));
}

// refreshSession replaces the wallet session shortly before it ends: a new
// key in the wallet module, POST /api/auth/sessions/{id}/refresh signed
// with the current key (its compressed public key makes the new key the
// session key), then the new key is stored and the old one wiped. The tabs
// take turns under a Web Lock, and a tab whose turn comes after another
// tab's refresh takes the stored new key instead of refreshing again: one
// refresh per session, however many tabs. On failure the session simply
// runs on, and the refresh is tried again a little later.
export async function refreshSession() {
  const old = state.key;
  if (!old || !old.sessionId) return;
  state.refreshing = true;
  try {
    const locks = typeof navigator === "object" ? navigator.locks : undefined;
    if (locks && typeof locks.request === "function") {
      await locks.request(REFRESH_LOCK, () => withKeys(() => refreshInTurn(old)));
    } else {
      await withKeys(() => refreshWith(old));
    }
  } catch {
    state.refreshAfter = performance.now() + REFRESH_RETRY_MS;
  } finally {
    state.refreshing = false;
  }
}

// refreshInTurn runs while this tab holds the refresh lock.
export async function refreshInTurn(old) {
  if (state.key !== old) return; // taken from another tab's refresh meanwhile, or signed out
  const stored = await resumeStored();
  if (stored) {
    await forgetHandle(stored.handle); // this tab holds its own handle, or takes one below
    if (stored.sessionId !== old.sessionId) {
      // Stored since this tab took its key: another tab has refreshed (the
      // BFF's session then is the stored one) or signed in anew.
      const me = (await api("GET", "/api/me")).data;
      await syncKeyNow(me);
      if (state.key !== old) {
        await showMe(me, { quiet: true });
        return;
      }
    }
  }
  await refreshWith(old);
}

export async function refreshWith(old) {
  if (state.key !== old) return;
  const wallet = await walletModule();
  let fresh = await wallet.generateKey("signing");
  try {
    const res = await signedRetry("POST", "/api/auth/sessions/" + old.sessionId + "/refresh", {
      clientPublicKey: fresh.publicKey,
    });
    if (res.status !== 201 || !res.data || typeof res.data.id !== "string") throw new Error("unexpected answer " + res.status);
    if (state.key !== old) throw new Error("the session changed meanwhile");
    const key = { handle: fresh.handle, publicKey: fresh.publicKey, sessionId: res.data.id };
    fresh = null;
    state.key = key;
    await keepKey(key, res.data); // replaces the stored key of the old session
    if (!key.kept) await dropStored(old.sessionId);
    await forgetHandle(old.handle);
    tell("refresh");
  } finally {
    if (fresh) await forgetHandle(fresh.handle);
  }
  // The new session's expiry, from the BFF (not queued: this runs in the
  // key turn already).
  try {
    const me = (await api("GET", "/api/me")).data;
    await syncKeyNow(me);
    await showMe(me, { quiet: true });
  } catch {
    // Shown at the next look.
  }
}

// onLogout revokes this tab's wallet session with a signed retry (so its
// key signs for nothing any more, even before it would expire), then ends
// the cookie session everywhere. Without the key only the cookie ends; the
// wallet session then lapses on its own.
export async function onLogout() {
  // Signed out while the key was still being resumed (the page draws before
  // it): wait for it a little, so that the session is revoked with it and
  // its stored copy deleted, not left to lapse.
  const key = state.key || (state.keyPending ? await Promise.race([keyReady(), delay(LOGOUT_KEY_WAIT_MS)]) : null);
  if (key && key.sessionId) {
    try {
      await signedRetry("DELETE", "/api/auth/sessions/" + key.sessionId);
    } catch {
      // Signed out below all the same.
    }
  }
  // The next sign-in starts at Home, not at the view left.
  history.replaceState(null, "", "/");
  await endEverywhere(t("app.status.signedOut"));
}

// endEverywhere ends the session for every tab: this one's key and the
// stored one, the cookie session (unless the BFF has ended it already: a
// 401 must not end a session another tab may have begun since), and the
// other tabs' keys.
export async function endEverywhere(message, { loggedOut = false } = {}) {
  const sessionId = state.sessionId || (state.key && state.key.sessionId) || "";
  await endHere(message);
  if (!loggedOut) await logoutQuietly();
  tell("logout", { sessionId });
}

export async function logoutQuietly() {
  try {
    await api("POST", "/api/logout");
  } catch {
    // The cookie session ends on the server anyway when the wallet session does.
  }
}

/**
 * Shows the session of me (GET /api/me): when it ends, counted down on the
 * monotonic clock, and this tab's key.
 */
export function showSession(me) {
  // Count down from the server's expiresIn on the monotonic clock: the
  // device's wall clock may be off by any amount. Without a usable value
  // the page does not end the session itself; the BFF's 401 will.
  const session = me.session || {};
  const left = session.expiresIn;
  state.deadline = typeof left === "number" && Number.isFinite(left) && left >= 0 ? performance.now() + left * 1000 : 0;
  const time = $("session-expiry");
  time.dateTime = typeof session.expiresAt === "string" ? session.expiresAt : "";
  time.title = state.deadline
    ? t("security.facts.untilAbout", { time: new Date(Date.now() + left * 1000).toLocaleTimeString(getLocale()) })
    : "";
  startCountdown();
  showKey(me);
}

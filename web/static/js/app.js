// The wallet page: e-mail OTP login, then the wallet's views.
//
// Views (router.js has the table of addresses): Home, Send, Activity with a
// payment's view, its receipt and the statement, Recipients with one
// recipient and the add form, Security. Each has its own address; back,
// forward, a reload and a link opened after sign-in land on the view the
// address names. Signed out, every address shows the sign-in page and
// keeps its path, so the sign-in lands where the link pointed; an address
// that is no view shows "Page not found" (the server answers it with
// status 404).
//
// Flow of a login (DESIGN.md "Signed retry"):
//   1. POST /api/login/start {email} -> {otpEncryptionTargetBundle, email}
//   2. paywallet.generateKey("signing") -> key handle (a non-extractable
//      WebCrypto key: no script, not even the wallet module, can read it)
//   3. paywallet.sealOtp(handle, code, bundle, pinned signer) -> encryptedOtpBundle
//   4. POST /api/login/verify {type: "EMAIL_OTP", encryptedOtpBundle} -> 202 {payloadToSign, requestId}
//   5. paywallet.stamp(handle, payloadToSign) -> Service-Wallet-Signature
//   6. POST /api/login/verify, same body bytes, with Service-Wallet-Signature and Request-Id -> 200 Session
//   7. paywallet.storeSession(handle, {sessionId, expiresAtMs}): the key is
//      kept in the origin's IndexedDB (still non-extractable) for the session
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

import { api, ApiError, messageOf, onSignedOut } from "./api.js";
import { applyTranslations, getLocale, setLocale, t } from "./i18n.js";
import { formatCountdown, formatWait, setCurrencies, shortKey } from "./format.js";
import { setAccountTypes } from "./accounttypes.js";
import * as recipientsView from "./views/recipients.js";
import * as recipientView from "./views/recipient.js";
import * as recipientNewView from "./views/recipient-new.js";
import { hideMoney, initMoney, showMoney } from "./money.js";
import { hideSessions, initSessions, showSessions, signedRetry } from "./sessions.js";
import { hideCredentials, initCredentials, showCredentials } from "./credentials.js";
import { closeReceipt, closeTransaction, openTransaction, showReceipt } from "./transactions.js";
import { closeStatement, showStatement } from "./statement.js";
import { enterSend } from "./send.js";
import { current, navigate, onRoute } from "./router.js";
import { getAssertion, oauthToken, passkeyProblem, passkeysAvailable } from "./webauthn.js";

const $ = (id) => document.getElementById(id);

const state = {
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

// The title of each view (in the language of the page: a function, read
// when the view is shown), and the navigation entry it belongs to.
const VIEWS = {
  home: { title: () => t("home.documentTitle"), nav: "home" },
  send: { title: () => t("send.title"), nav: "send" },
  activity: { title: () => t("activity.title"), nav: "activity" },
  statement: { title: () => t("statement.title"), nav: "activity" },
  payment: { title: () => t("payment.title"), nav: "activity" },
  receipt: { title: () => t("receipt.title"), nav: "activity" },
  recipients: { title: () => t("recipients.title"), nav: "recipients" },
  "recipient-new": { title: () => t("recipients.new.title"), nav: "recipients" },
  recipient: { title: () => t("recipients.detail.title"), nav: "recipients" },
  security: { title: () => t("security.title"), nav: "security" },
};

// The other tabs of this wallet. Messages: {type: "login"}, {type:
// "refresh"}, {type: "logout", sessionId}.
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("wallet") : null;

function tell(type, fields = {}) {
  if (channel) channel.postMessage({ type, ...fields });
}

let started = false;
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}

async function start() {
  if (started) return;
  started = true;
  // The questions to the BFF go out first; the page's own set-up runs
  // while they are answered, in short tasks (yieldToPage) rather than one
  // long one that a slow phone would feel.
  const me = meNow();
  const config = api("GET", "/api/config");
  config.catch(() => {}); // read below
  await startLanguage();
  await yieldToPage();
  const wallet = walletModule;
  const key = () => (state.key && state.key.sessionId ? state.key : null);
  const keys = { key, keyPending: () => state.keyPending !== null, keyReady };
  recipientsView.init();
  recipientView.init({ setStatus });
  recipientNewView.init({ wallet, setStatus });
  initSessions({ wallet, ...keys, setStatus });
  initMoney({ wallet, ...keys, config: () => state.config, setStatus });
  initCredentials({ wallet, config: () => state.config, setStatus });
  $("passkey-login").addEventListener("click", () => onPasskeyLogin());
  $("passkey-choices").addEventListener("click", (event) => {
    const b = event.target.closest("button[data-id]");
    if (b) onPasskeyLogin(b.dataset.id);
  });
  $("oauth-login").addEventListener("click", onOAuthLogin);
  $("oauth-cancel").addEventListener("click", onOAuthCancel);
  $("email-form").addEventListener("submit", onEmailSubmit);
  $("code-form").addEventListener("submit", onCodeSubmit);
  $("code-back").addEventListener("click", onBack);
  $("code-resend").addEventListener("click", onResend);
  $("logout").addEventListener("click", onLogout);
  onRoute((route, { pop, state: entry }) => showRoute(route, { pop, entry }));
  $("copy-key").addEventListener("click", onCopyKey);
  document.addEventListener("visibilitychange", () => {
    // Timers sleep in a hidden tab, and the session may have ended or
    // changed meanwhile (or begun, in another tab): ask again. A login
    // under way here is left alone.
    if (document.hidden || !state.config) return;
    if (state.signedIn || (!state.login && !state.key)) refresh();
  });
  onSignedOut(() => {
    if (state.signedIn) endEverywhere(t("app.status.sessionEnded"), { loggedOut: true });
  });
  if (channel) channel.onmessage = (event) => onOtherTab(event.data);

  // The view is drawn from the BFF's answers: the wallet module loads after
  // the first paint, in its Worker, and only what needs a key waits for it.
  try {
    state.config = (await config).data;
  } catch (err) {
    configured.reject(err);
    setStatus(t("app.error.serviceUnavailable", { reason: messageOf(err) }));
    return;
  }
  configured.resolve(state.config);
  applyConfig(state.config);
  walletModule(); // its load begins after the first paint

  await showCurrent(me);
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}

// yieldToPage lets the browser run what is waiting (input, rendering,
// network answers) before the caller goes on.
function yieldToPage() {
  if (typeof scheduler === "object" && scheduler && typeof scheduler.yield === "function") return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// meNow starts GET /api/me and returns the Promise of its outcome, as
// showCurrent takes it ({me} or {err}).
function meNow() {
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
let painted;
const firstPaint = new Promise((resolve) => {
  painted = () => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 1000);
    painted = () => {};
  };
});

// startLanguage chooses the language and the number locale from the
// browser's (i18n.js), then puts the page's static text in that language.
// English is in the page already and its catalogue is a static import; only
// another language is loaded here. Whatever fails, the page goes on (in
// English, or partly translated): a language must never stop the wallet.
async function startLanguage() {
  try {
    await setLocale();
  } catch (err) {
    console.warn("i18n: the language could not be set", err);
  }
  try {
    applyTranslations(document);
  } catch (err) {
    console.warn("i18n: the page's text could not be translated", err);
  }
}

// configured settles with GET /api/config's answer, which names the
// module's content-hashed URLs.
const configured = {};
configured.promise = new Promise((resolve, reject) => Object.assign(configured, { resolve, reject }));
configured.promise.catch(() => {}); // reported by start

// walletModule returns the Promise of the wallet module's client. The
// first call begins its load (wallet.js, the Worker, the module), which
// waits for the configuration and for the page's first paint, whoever
// asks first. A failure stays for the page's life (the page says to
// reload it).
function walletModule() {
  if (!state.wallet) {
    // A dynamic import, so that a missing or broken wallet.js leaves the page
    // usable enough to say what is wrong.
    state.wallet = Promise.all([configured.promise, firstPaint])
      .then(() => import("./wallet.js"))
      .then((m) => m.loadWallet(state.config.wasmUrl, { wasmExecUrl: state.config.wasmExecUrl }));
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
async function walletFor() {
  if (state.walletReady) return walletModule();
  return whileKeysLoad(walletModule());
}

// whileKeysLoad says "getting your keys ready" on the status line until
// promise settles, then puts back what it said before.
async function whileKeysLoad(promise) {
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
async function keyReady() {
  if (state.keyPending) await whileKeysLoad(state.keyPending);
  return state.key && state.key.sessionId ? state.key : null;
}

// loadedWallet is the wallet module, or null when it did not load.
async function loadedWallet() {
  try {
    return await walletModule();
  } catch {
    return null;
  }
}

function applyConfig(config) {
  // Facts of shared/accountrules, for money and recipients drawn before the module.
  setCurrencies(config.currencies);
  setAccountTypes(config.accountTypes);
  $("sandbox-banner").hidden = config.mode !== "sandbox";
  $("passkey-login").hidden = !passkeysAvailable();
  $("oauth-login").hidden = !config.oauth;
  if (config.oauth) $("oauth-login").textContent = t("signin.oauth.buttonNamed", { name: config.oauth.name });
  const link = $("dev-mailbox-link");
  if (config.devMailbox && typeof config.devMailboxUrl === "string" && config.devMailboxUrl.startsWith("/")) {
    link.href = config.devMailboxUrl;
    link.hidden = false;
  } else {
    link.hidden = true;
  }
}

// showCurrent asks the BFF who is signed in (or takes the answer started
// already, as meNow returns it) and shows the matching view.
//
// Draw first, keys after: when the BFF says a session is signed in and
// this tab's key is not known yet (the page is starting, the module still
// loading), the wallet is shown at once from the BFF's data, and the key is
// resumed behind it. Should the key turn out not to be here, the sign-in
// page replaces the wallet, as it would have been shown at once before.
async function showCurrent(answer) {
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
async function drawBeforeKey(me) {
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
async function dropStaleKey() {
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
async function refresh() {
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
async function showMe(me, options = {}) {
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

// ---- this tab's key, and the one kept for the session ----------------------

// Key changes of this tab (resume, adopt, refresh) take turns: two of them
// at once would leave a handle behind or adopt a key twice.
let keyTurn = Promise.resolve();
function withKeys(fn) {
  const run = keyTurn.then(() => fn());
  keyTurn = run.catch(() => {});
  return run;
}

function syncKey(me) {
  return withKeys(() => syncKeyNow(me));
}

// syncKeyNow makes this tab's key the signing key of the session the BFF
// reports, or none: a key of another session (another tab signed in, or
// refreshed, since) is wiped; without a key, the stored one is resumed if
// it is this session's, and deleted if it is not.
async function syncKeyNow(me) {
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
async function currentSessionId() {
  try {
    const me = (await api("GET", "/api/me")).data;
    return (me && me.session && me.session.id) || "";
  } catch (err) {
    return err instanceof ApiError && err.status === 401 ? "" : null;
  }
}

// resumeStored returns the stored session key under a new handle of this
// tab, or null when there is none or the browser keeps none.
async function resumeStored() {
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
async function keepKey(key, session) {
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
function expiresAtOf(session) {
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
async function dropStored(sessionId) {
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
function showKeyKept() {
  $("key-not-kept").hidden = !(state.key && state.key.sessionId && state.key.kept === false);
}

async function onOtherTab(message) {
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
    recipientsView.signOut(); // they may be another customer's now
    recipientNewView.signOut();
    hideMoney();
    hideSessions();
    hideCredentials();
    await showCurrent();
  }
}

// endHere leaves the signed-in (or half-signed-in) state in this tab only:
// the login is shown at once, then the key is wiped and the stored one of
// its session deleted.
async function endHere(message) {
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

// ---- login ----------------------------------------------------------------

function showLogin({ step = "email" } = {}) {
  painted();
  stopCountdown();
  state.signedIn = false;
  $("signed-in").hidden = true;
  $("nav").hidden = true;
  $("logout").hidden = true;
  // The session's key is not this view's any more.
  const keyEl = $("session-public-key");
  keyEl.textContent = "";
  keyEl.removeAttribute("title");
  keyEl.dataset.value = "";
  recipientsView.signOut();
  recipientNewView.signOut();
  hideMoney();
  hideSessions();
  hideCredentials();
  clearSignedInMessages();
  $("passkey-choose").hidden = true;
  showRoute(current(), { focus: false });
  $("email-submit").disabled = false;
  $("email-form").hidden = step !== "email";
  $("code-form").hidden = step !== "code";
  setStatus("");
  if (step === "email") {
    $("code").value = "";
    $("email").focus();
  } else {
    $("code").focus();
  }
}

async function onEmailSubmit(event) {
  event.preventDefault();
  clearErrors();
  const email = $("email").value.trim();
  if (email === "") return fieldError("email", t("signin.email.error.empty"));
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    return fieldError("email", t("signin.email.error.invalid"));
  }
  await sendCode(email, $("email-submit"));
}

async function onResend() {
  clearErrors();
  if (!state.login) return showLogin();
  await sendCode(state.login.email, $("code-resend"), "code");
}

// sendCode starts a login; errors are shown at field, the step the person
// is on ("email", or "code" when a new code was asked for).
async function sendCode(email, button, field = "email") {
  await busy(button, t("signin.code.sending"), async () => {
    let wallet;
    try {
      wallet = await walletFor();
    } catch (err) {
      return formError(t("signin.error.walletModule", { reason: messageOf(err) }));
    }
    try {
      const { data } = await api("POST", "/api/login/start", { body: { email } });
      state.login = { bundle: data.otpEncryptionTargetBundle, email: data.email };
      await newKey(wallet);
      $("code-email").textContent = data.email;
      withElement($("code-hint"), t("signin.code.hint"), "{email}", $("code-email"));
      showLogin({ step: "code" });
      setStatus(t("signin.code.sent", { email: data.email }));
    } catch (err) {
      if (field === "code" && err instanceof ApiError && err.status === 429) holdResend(err.retryAfter);
      reportError(err, field);
    }
  });
}

// holdResend disables "Send a new code" for the Retry-After seconds of a
// 429, with the time left on the button.
function holdResend(seconds) {
  const wait = Number.isFinite(seconds) && seconds > 0 ? seconds : 30;
  state.resendUntil = performance.now() + wait * 1000;
  clearInterval(state.resendTimer);
  state.resendTimer = setInterval(updateResend, 250);
  updateResend();
}

function updateResend() {
  const button = $("code-resend");
  const left = state.resendUntil - performance.now();
  if (left > 0) {
    button.disabled = true;
    button.textContent = t("signin.code.resendWait", { time: formatCountdown(left) });
    return;
  }
  if (state.resendTimer) {
    clearInterval(state.resendTimer);
    state.resendTimer = 0;
    button.disabled = false;
    button.textContent = t("signin.code.resend");
  }
}

async function onCodeSubmit(event) {
  event.preventDefault();
  clearErrors();
  const code = $("code").value.trim();
  if (!/^[0-9]{6}$/.test(code)) return fieldError("code", t("signin.code.error.format"));
  if (!state.login) return showLogin();

  await busy($("code-submit"), t("signin.code.signingIn"), async () => {
    try {
      const wallet = await walletFor();
      if (!state.key) await newKey(wallet);
      const sealed = await wallet.sealOtp(state.key.handle, code, state.login.bundle, state.config.otpSignerPublicKey);
      // One body string for both legs: the signature is bound to its bytes.
      const body = JSON.stringify({ type: "EMAIL_OTP", encryptedOtpBundle: sealed });

      const first = await api("POST", "/api/login/verify", { body });
      if (first.status !== 202 || !first.data || typeof first.data.payloadToSign !== "string") {
        throw new Error("unexpected answer " + first.status + " to the code");
      }
      const stamp = await wallet.stamp(state.key.handle, first.data.payloadToSign);
      const second = await api("POST", "/api/login/verify", {
        body,
        headers: { "Service-Wallet-Signature": stamp, "Request-Id": first.data.requestId },
      });
      if (second.status !== 200) throw new Error("unexpected answer " + second.status + " to the signature");

      // The key is now the session's signing key (the Session's id), kept
      // for the session so that a reload or another tab can resume it.
      if (!second.data || typeof second.data.id !== "string") throw new Error("unexpected answer to the signature");
      state.login = null;
      $("code").value = "";
      if (state.key) {
        state.key.sessionId = second.data.id;
        await keepKey(state.key, second.data);
      }
      await showCurrent();
      tell("login");
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED") {
        fieldError("code", t("signin.code.error.wrong"));
      } else if (err instanceof ApiError && err.details && err.details.reason === "NO_PENDING_LOGIN") {
        // The BFF forgot the login (timed out, or ended in another tab):
        // so does the page, key included.
        state.login = null;
        await forgetKey();
        showLogin();
        formError(t("signin.error.timedOut"));
      } else {
        reportError(err, "code");
      }
    }
  });
}

// onPasskeyLogin signs in with a passkey: a new key in the wallet module,
// a login challenge bound to it, the browser's passkey prompt, then the
// verify call. The key becomes the session key (client-held, compressed).
async function onPasskeyLogin(authMethodId) {
  clearErrors();
  const email = $("email").value.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    return fieldError("email", t("signin.passkey.error.email"));
  }
  await busy($("passkey-login"), t("signin.passkey.waiting"), async () => {
    try {
      const wallet = await walletFor();
      await newKey(wallet);
      const body = { email, clientPublicKey: state.key.publicKey };
      if (authMethodId) body.authMethodId = authMethodId;
      const { data } = await api("POST", "/api/login/passkey/start", { body });
      if (Array.isArray(data.choose)) return showPasskeyChoices(data.choose);
      $("passkey-choose").hidden = true;
      const assertion = await getAssertion(data);
      const res = await api("POST", "/api/login/passkey/verify", { body: { assertion } });
      await finishLogin(res);
    } catch (err) {
      await forgetKey();
      const problem = passkeyProblem(err);
      if (problem) return formError(problem);
      if (err instanceof ApiError && err.status === 401) return formError(t("signin.passkey.error.refused"));
      reportError(err, "email");
    }
  });
}

function showPasskeyChoices(choices) {
  const items = choices.map((c) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "secondary";
    b.dataset.id = c.id;
    b.textContent = c.nickname;
    li.append(b);
    return li;
  });
  $("passkey-choices").replaceChildren(...items);
  $("passkey-choose").hidden = false;
  setStatus(t("signin.passkey.chooseStatus"));
}

// onOAuthLogin signs in with the configured OpenID Connect provider: the ID
// token's nonce is the SHA-256 of a new wallet key, so the token is good
// for this key only.
//
// While the provider's window is open nothing else is held back: the page
// cannot tell when that window is closed (it is on another origin, cut off
// by Cross-Origin-Opener-Policy), so the person may press Cancel or simply
// sign in another way, which ends the wait.
async function onOAuthLogin() {
  clearErrors();
  abortOAuth();
  const abort = new AbortController();
  state.oauth = abort;
  const name = state.config.oauth.name;
  $("oauth-login").disabled = true;
  $("oauth-login").setAttribute("aria-busy", "true");
  $("oauth-cancel").hidden = false;
  state.oauthStatus = t("signin.oauth.waiting", { name });
  setStatus(state.oauthStatus);
  let key = null;
  try {
    const wallet = await walletFor();
    if (abort.signal.aborted) return;
    await newKey(wallet);
    key = state.key;
    const oidcToken = await oauthToken(state.config.oauth, key.publicKey, { signal: abort.signal });
    if (abort.signal.aborted || state.key !== key) return;
    const res = await api("POST", "/api/login/oauth", { body: { oidcToken, clientPublicKey: key.publicKey } });
    if (abort.signal.aborted || state.key !== key) return;
    await finishLogin(res);
  } catch (err) {
    if (abort.signal.aborted) return; // cancelled, or another sign-in took over (and its own key)
    if (state.key === key) await forgetKey();
    reportError(err, "email");
  } finally {
    if (state.oauth === abort) endOAuthWait();
  }
}

// abortOAuth ends a wait for the provider's window, if one is under way.
// The key made for it is left to whoever calls (a new sign-in replaces it).
function abortOAuth() {
  const abort = state.oauth;
  if (!abort) return;
  endOAuthWait();
  abort.abort();
}

function endOAuthWait() {
  state.oauth = null;
  $("oauth-login").disabled = false;
  $("oauth-login").removeAttribute("aria-busy");
  $("oauth-cancel").hidden = true;
  if (state.oauthStatus && $("status").textContent === state.oauthStatus) setStatus("");
  state.oauthStatus = "";
}

// onOAuthCancel is the Cancel of a wait for the provider's window.
async function onOAuthCancel() {
  if (!state.oauth) return;
  abortOAuth();
  setStatus(t("signin.oauth.cancelled"));
  await forgetKey();
  $("oauth-login").focus();
}

// finishLogin takes the 200 Session of a one-call login (passkey, OAuth).
async function finishLogin(res) {
  if (res.status !== 200 || !res.data || typeof res.data.id !== "string") throw new Error("unexpected answer " + res.status);
  state.key.sessionId = res.data.id;
  state.login = null;
  await keepKey(state.key, res.data);
  await showCurrent();
  tell("login");
}

async function onBack() {
  clearErrors();
  await forgetKey();
  state.login = null;
  showLogin();
}

// newKey makes a new signing key for a login (e-mail code, passkey and
// OAuth alike: the client-held session key is sent compressed).
async function newKey(wallet) {
  await forgetKey();
  const key = await wallet.generateKey("signing");
  state.key = { handle: key.handle, publicKey: key.publicKey };
}

// forgetKey wipes this tab's handle of its key. The stored key, if any, is
// left alone: other tabs may use it (endHere deletes it).
async function forgetKey() {
  const key = state.key;
  state.key = null;
  showKeyKept();
  if (key) await forgetHandle(key.handle);
}

async function forgetHandle(handle) {
  try {
    const wallet = await walletModule();
    await wallet.forget(handle);
  } catch {
    // The module is gone or never loaded, or the handle expired: there is
    // nothing left to wipe.
  }
}

// ---- signed in ------------------------------------------------------------

// showSignedIn shows the wallet. quiet keeps the focus and the status line
// where they are (a refresh, not a change of view).
function showSignedIn(me, { quiet = false } = {}) {
  painted();
  const entering = !state.signedIn;
  state.signedIn = true;
  $("login").hidden = true;
  $("nav").hidden = false;
  $("logout").hidden = false;
  recipientsView.signIn();
  recipientNewView.signIn();
  $("me-email").textContent = me.email || "";

  const acct = me.internalAccount || {};
  $("account-id").textContent = acct.id || "";
  $("wallet-type").textContent = valueText(acct.type);
  $("account-status").textContent = valueText(acct.status);

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
  showMoney(me);
  showSessions(session.id);
  if (!quiet || $("credentials").hidden) showCredentials(acct.id);
  if (entering || !quiet) showRoute(current(), { focus: !quiet });
  if (!quiet) setStatus(t("app.status.signedIn"));
}

// showKey shows what this tab's key is (its public key, or why there is
// none, or that it is being got ready), and has the module wipe it when
// the session ends.
function showKey(me) {
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

// ---- views ----------------------------------------------------------------

// showRoute shows the view of route (router.js; null: no view has this
// address). Signed out, the sign-in page stands for every view. focus moves
// the keyboard focus to the view's heading, as a new page would; pop says
// the browser went back or forward (it restores the scroll position
// itself); entry is the history entry's state ({sent: true} after Send).
function showRoute(route, { focus = true, pop = false, entry = null } = {}) {
  const name = route ? route.name : "notfound";
  $("notfound").hidden = route !== null;
  document.body.classList.toggle("signed-in", state.signedIn);
  if (!state.signedIn) {
    $("login").hidden = route === null;
    document.body.dataset.view = route ? "signin" : "notfound";
    document.title = t("app.documentTitle", { view: route ? t("signin.title") : t("notFound.title") });
    if (!route && focus) $("notfound-title").focus();
    return;
  }
  $("signed-in").hidden = route === null;
  for (const view of document.querySelectorAll("#signed-in > .view")) view.hidden = view.dataset.view !== name;
  const nav = route ? VIEWS[name].nav : "";
  for (const a of document.querySelectorAll("#nav a[data-nav]")) {
    if (a.dataset.nav === nav) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (name !== "payment") closeTransaction();
  if (name !== "receipt") closeReceipt();
  if (name !== "statement") closeStatement();
  const sent = !!((entry && entry.sent) || (history.state && history.state.sent));
  switch (name) {
    case "payment":
      openTransaction(route.id, { focus: false, sent });
      break;
    case "receipt":
      showReceipt(route.id);
      break;
    case "statement":
      showStatement();
      break;
    case "send":
      enterSend();
      break;
    case "recipient-new":
      recipientNewView.show();
      break;
    case "recipient":
      recipientView.show(route);
      break;
  }
  document.title = t("app.documentTitle", { view: route ? VIEWS[name].title() : t("notFound.title") });
  document.body.dataset.view = name;
  if (!pop) window.scrollTo(0, 0);
  if (focus) {
    const heading = route ? $("view-" + name).querySelector("h1") : $("notfound-title");
    if (heading) heading.focus({ preventScroll: true });
  }
}

function startCountdown() {
  stopCountdown();
  tick();
  state.timer = setInterval(tick, 1000);
}

function stopCountdown() {
  if (state.timer) clearInterval(state.timer);
  state.timer = 0;
}

function tick() {
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
async function expire() {
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
async function refreshSession() {
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
async function refreshInTurn(old) {
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

async function refreshWith(old) {
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
async function onLogout() {
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
async function endEverywhere(message, { loggedOut = false } = {}) {
  const sessionId = state.sessionId || (state.key && state.key.sessionId) || "";
  await endHere(message);
  if (!loggedOut) await logoutQuietly();
  tell("logout", { sessionId });
}

async function logoutQuietly() {
  try {
    await api("POST", "/api/logout");
  } catch {
    // The cookie session ends on the server anyway when the wallet session does.
  }
}

async function onCopyKey() {
  const value = $("session-public-key").dataset.value;
  if (!value) return;
  try {
    await navigator.clipboard.writeText(value);
    setStatus(t("security.facts.copied"));
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("session-public-key"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    setStatus(t("security.facts.copyBlocked"));
  }
}

// ---- messages -------------------------------------------------------------

// clearSignedInMessages wipes every error the wallet's views show: what
// went wrong in one session ("The export did not work…") means nothing to
// the next, which may be another person's.
function clearSignedInMessages() {
  for (const el of document.querySelectorAll("#signed-in .form-error, #signed-in .field-error")) {
    el.textContent = "";
    el.hidden = true;
  }
  for (const el of document.querySelectorAll("#signed-in [aria-invalid]")) el.removeAttribute("aria-invalid");
}

function setStatus(text) {
  $("status").textContent = text;
}

function clearErrors() {
  for (const field of ["email", "code"]) {
    $(field + "-error").hidden = true;
    $(field + "-error").textContent = "";
    $(field).removeAttribute("aria-invalid");
  }
  $("login-error").hidden = true;
  $("login-error").textContent = "";
}

function fieldError(field, text) {
  const el = $(field + "-error");
  el.textContent = text;
  el.hidden = false;
  $(field).setAttribute("aria-invalid", "true");
  $(field).focus();
}

function formError(text) {
  $("login-error").textContent = text;
  $("login-error").hidden = false;
}

// reportError shows an error next to the field it concerns when it can.
function reportError(err, field) {
  if (err instanceof ApiError) {
    const fields = err.fieldErrors();
    if (fields[field]) return fieldError(field, t("signin.error.field", { message: capitalize(fields[field]) }));
    if (err.status === 429) return fieldError(field, rateLimitText(err));
    if (err.status === 401 && err.code === "UNAUTHORIZED") {
      showLogin();
      return formError(t("signin.error.notAccepted"));
    }
  }
  formError(messageOf(err));
}

// rateLimitText says which wait a 429 RATE_LIMITED is (details.reason, from
// the service or the BFF's sign-in limiter) and what to do meanwhile.
function rateLimitText(err) {
  const details = err.details || {};
  const wait = formatWait(err.retryAfter ?? details.retryAfter);
  switch (details.reason) {
    case "CODE_RECENTLY_SENT":
      return t("signin.wait.codeSent", { wait });
    case "CREDENTIAL_LOCKED":
      return t("signin.wait.locked", { wait });
    case "CHALLENGE_RECENTLY_ISSUED":
      return t("signin.wait.passkey", { wait });
    case "TOO_MANY_SIGN_IN_ATTEMPTS":
      return t("signin.wait.attempts", { wait });
    default:
      return t("signin.wait.other", { wait });
  }
}

async function busy(button, text, fn) {
  abortOAuth(); // another way of signing in ends a wait for the provider's window
  const buttons = document.querySelectorAll("#login button");
  for (const b of buttons) b.disabled = true;
  button.setAttribute("aria-busy", "true");
  setStatus(text);
  try {
    await fn();
  } finally {
    for (const b of buttons) b.disabled = false;
    updateResend(); // a 429 may hold "Send a new code" back
    button.removeAttribute("aria-busy");
    if ($("status").textContent === text) setStatus("");
  }
}

// valueText is a value of the service (an account's type or status, such
// as "EMBEDDED_WALLET") in words: the catalogue's ("security.value.<value
// in lowerCamel>"), else the value itself made readable.
function valueText(value) {
  if (typeof value !== "string" || value === "") return "";
  const key = "security.value." + value.toLowerCase().replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  const text = t(key);
  return text === key ? humanize(value) : text;
}

// withElement fills el with message, whose placeholder (such as "{email}")
// is replaced by node, an element the page fills itself: the words around
// it stay in the order of the language.
function withElement(el, message, placeholder, node) {
  const at = message.indexOf(placeholder);
  if (at < 0) {
    el.replaceChildren(message, " ", node);
    return;
  }
  el.replaceChildren(message.slice(0, at), node, message.slice(at + placeholder.length));
}

function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  return capitalize(value.toLowerCase().replaceAll("_", " "));
}

function capitalize(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

// The wallet page: the shell around the views. It reads the configuration,
// signs the person in (e-mail OTP, a passkey, single sign-on), and shows the
// view of the address; the session itself (keys, refresh, other tabs,
// sign-out) is session.js.
//
// Views (views.js is their table; each is a module, views/<name>.js): Home,
// Send, Activity with a payment's view, its receipt and the statement,
// Recipients with one recipient and the add form, Security. Each has its
// own address; back, forward, a reload and a link opened after sign-in
// land on the view the address names. Signed out, every address shows the sign-in page and
// keeps its path, so the sign-in lands where the link pointed; an address
// that is no view shows "Page not found" (the server answers it with
// status 404).

import { api, messageOf, onSignedOut } from "./api.js";
import { applyTranslations, setLocale, t } from "./i18n.js";
import { setCurrencies } from "./format.js";
import { setAccountTypes } from "./accounttypes.js";
import { startMoneyEvents, stopMoneyEvents } from "./money.js";
import { initSignIn, showSignIn } from "./views/signin.js";
import {
  configured,
  endEverywhere,
  followOtherTabs,
  keyReady,
  meNow,
  onLogout,
  painted,
  refresh,
  setSessionPage,
  showCurrent,
  showSession,
  state,
  stopCountdown,
  walletModule,
  yieldToPage,
} from "./session.js";
import { current, onRoute, views } from "./router.js";
import { passkeysAvailable } from "./webauthn.js";
import { cancelStepUp } from "./stepup.js";

const $ = (id) => document.getElementById(id);

// The table of views (views.js, by name): each one's title (a message
// key) and the navigation entry it belongs to.
const VIEWS = Object.fromEntries(views.map((v) => [v.name, v]));

// The views' modules, views/<name>.js, by name, once loaded (start). Each
// has the same shape, every function optional:
//
//   init(shell)               once, signed out: wires its markup; shell is
//                             {wallet, key, keyPending, keyReady, config, setStatus}
//   signIn(me, {quiet})       each time the signed-in page is drawn for me
//                             (GET /api/me); quiet: a refresh, not a change of view
//   signOut()                 signed out: forgets what it showed (another
//                             person may sign in)
//   show(route, {sent})       its address is the page's (route: router.js;
//                             sent: the history entry says a payment was just sent)
//   hide()                    another address is
//
// They are imported by name from the table, all at once at the start (the
// BFF preloads them with the page), so that adding a view adds no line here.
let modules = {};
const loadViews = () =>
  Promise.all(views.map((v) => import(`./views/${v.name}.js`))).then((loaded) => {
    modules = Object.fromEntries(views.map((v, i) => [v.name, loaded[i]]));
  });

// signOutViews forgets what every view showed, the event stream first.
function signOutViews() {
  stopMoneyEvents();
  eachView("signOut");
}

// eachView calls the function fn of every view's module that has one.
function eachView(fn, ...args) {
  for (const v of views) {
    const m = modules[v.name];
    if (m && typeof m[fn] === "function") m[fn](...args);
  }
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
  setSessionPage({ showLogin, showSignedIn, setStatus, signOutViews });
  // The questions to the BFF go out first; the page's own set-up runs
  // while they are answered, in short tasks (yieldToPage) rather than one
  // long one that a slow phone would feel.
  const me = meNow();
  const config = api("GET", "/api/config");
  config.catch(() => {}); // read below
  const viewsLoaded = loadViews();
  await startLanguage();
  await yieldToPage();
  const wallet = walletModule;
  const key = () => (state.key && state.key.sessionId ? state.key : null);
  const keys = { key, keyPending: () => state.keyPending !== null, keyReady };
  await viewsLoaded;
  eachView("init", { wallet, ...keys, config: () => state.config, setStatus });
  initSignIn();
  $("logout").addEventListener("click", onLogout);
  onRoute((route, { pop, state: entry, person }) => {
    // The status line speaks of what just happened where the person was:
    // once they move on (a link, back or forward) it is old news. After
    // an action the page itself moves, and what it said goes along.
    if (person) setStatus("");
    showRoute(route, { pop, entry });
  });
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
  followOtherTabs();

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
  cancelStepUp(); // a confirmation left open is nobody's now
  signOutViews();
  clearSignedInMessages();
  showRoute(current(), { focus: false });
  showSignIn(step);
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
  showSession(me);
  eachView("signIn", me, { quiet });
  startMoneyEvents();
  if (entering || !quiet) showRoute(current(), { focus: !quiet });
  if (!quiet) setStatus(t("app.status.signedIn"));
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
  // A public view (the sign-out link of a security e-mail) stands outside
  // the signed-in part and is shown signed in or out, the sign-in page
  // never in its place.
  const isPublic = !!(route && VIEWS[name].public);
  for (const view of document.querySelectorAll("#main > .view")) view.hidden = !isPublic || view.dataset.view !== name;
  if (isPublic) {
    $("login").hidden = true;
    $("signed-in").hidden = true;
    for (const a of document.querySelectorAll("#nav a[data-nav]")) a.removeAttribute("aria-current");
    for (const v of views) if (v.name !== name && modules[v.name].hide) modules[v.name].hide();
    if (modules[name].show) modules[name].show(route, {});
    document.title = t("app.documentTitle", { view: t(VIEWS[name].title) });
    document.body.dataset.view = name;
    if (!pop) window.scrollTo(0, 0);
    if (focus) $("view-" + name).querySelector("h1").focus({ preventScroll: true });
    return;
  }
  if (!state.signedIn) {
    $("login").hidden = route === null;
    document.body.dataset.view = route ? "signin" : "notfound";
    document.title = t("app.documentTitle", { view: route ? t("signin.title") : t("notFound.title") });
    if (!route && focus) $("notfound-title").focus();
    return;
  }
  $("signed-in").hidden = route === null;
  $("login").hidden = true;
  for (const view of document.querySelectorAll("#signed-in > .view")) view.hidden = view.dataset.view !== name;
  const nav = route ? VIEWS[name].nav : "";
  for (const a of document.querySelectorAll("#nav a[data-nav]")) {
    if (a.dataset.nav === nav) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const v of views) if (v.name !== name && modules[v.name].hide) modules[v.name].hide();
  const sent = !!((entry && entry.sent) || (history.state && history.state.sent));
  if (route && modules[name].show) modules[name].show(route, { sent });
  document.title = t("app.documentTitle", { view: route ? t(VIEWS[name].title) : t("notFound.title") });
  document.body.dataset.view = name;
  if (!pop) window.scrollTo(0, 0);
  if (focus) {
    const heading = route ? $("view-" + name).querySelector("h1") : $("notfound-title");
    if (heading) heading.focus({ preventScroll: true });
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


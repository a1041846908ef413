// The wallet page: e-mail OTP login, then the signed-in view.
//
// Flow of a login (DESIGN.md "Signed retry"):
//   1. POST /api/login/start {email} -> {credentialId, otpEncryptionTargetBundle, email}
//   2. paywallet.generateKey() -> key handle (the private key stays in wasm)
//   3. paywallet.sealOtp(handle, code, bundle, pinned signer) -> encryptedOtpBundle
//   4. POST /api/login/verify {type: "EMAIL_OTP", encryptedOtpBundle} -> 202 {payloadToSign, requestId}
//   5. paywallet.stamp(handle, payloadToSign) -> Service-Wallet-Signature
//   6. POST /api/login/verify, same body bytes, with Service-Wallet-Signature and Request-Id -> 200 Session
//
// The key handle lives only in this module's memory. After a reload the BFF
// still knows the session (GET /api/me), but the key is gone; the page says so.

import { api, ApiError } from "./api.js";
import { formatAmount, formatCountdown, formatWait, shortKey } from "./format.js";

const $ = (id) => document.getElementById(id);

const state = {
  config: null, // GET /api/config
  wallet: null, // Promise of globalThis.paywallet
  key: null, // {handle, publicKey} of the current login's key, or null
  login: null, // {credentialId, bundle, email} between start and verify
  expiresAt: 0, // ms since epoch of the wallet session's end
  timer: 0,
};

let started = false;
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}

async function start() {
  if (started) return;
  started = true;
  $("email-form").addEventListener("submit", onEmailSubmit);
  $("code-form").addEventListener("submit", onCodeSubmit);
  $("code-back").addEventListener("click", onBack);
  $("code-resend").addEventListener("click", onResend);
  $("logout").addEventListener("click", onLogout);
  $("copy-key").addEventListener("click", onCopyKey);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.expiresAt) tick();
  });

  try {
    state.config = (await api("GET", "/api/config")).data;
  } catch (err) {
    setStatus("The wallet service is not available: " + messageOf(err));
    return;
  }
  applyConfig(state.config);
  state.wallet = loadWalletModule(state.config.wasmUrl);
  state.wallet.catch(() => {}); // reported when a login needs it

  await showCurrent();
}

function loadWalletModule(url) {
  // A dynamic import, so that a missing or broken wallet.js leaves the page
  // usable enough to say what is wrong.
  return import("./wallet.js").then((m) => m.loadWallet(url));
}

function applyConfig(config) {
  $("sandbox-banner").hidden = config.mode !== "sandbox";
  const link = $("dev-mailbox-link");
  if (config.devMailbox && typeof config.devMailboxUrl === "string" && config.devMailboxUrl.startsWith("/")) {
    link.href = config.devMailboxUrl;
    link.hidden = false;
  } else {
    link.hidden = true;
  }
}

// showCurrent asks the BFF who is signed in and shows the matching view.
async function showCurrent() {
  try {
    const me = (await api("GET", "/api/me")).data;
    showSignedIn(me);
  } catch (err) {
    showLogin();
    if (!(err instanceof ApiError && err.status === 401)) {
      setStatus("Could not check your session: " + messageOf(err));
    }
  }
}

// ---- login ----------------------------------------------------------------

function showLogin({ step = "email" } = {}) {
  stopCountdown();
  $("signed-in").hidden = true;
  $("login").hidden = false;
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
  if (email === "") return fieldError("email", "Enter your e-mail address.");
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    return fieldError("email", "Enter an e-mail address such as name@example.com.");
  }
  await sendCode(email, $("email-submit"));
}

async function onResend() {
  clearErrors();
  if (!state.login) return showLogin();
  await sendCode(state.login.email, $("code-resend"));
}

async function sendCode(email, button) {
  await busy(button, "Sending a code…", async () => {
    let wallet;
    try {
      wallet = await state.wallet;
    } catch (err) {
      return formError("The wallet module could not load, so you cannot sign in here: " + messageOf(err));
    }
    try {
      const { data } = await api("POST", "/api/login/start", { body: { email } });
      state.login = { credentialId: data.credentialId, bundle: data.otpEncryptionTargetBundle, email: data.email };
      await newKey(wallet);
      $("code-email").textContent = data.email;
      showLogin({ step: "code" });
      setStatus("We sent a code to " + data.email + ".");
    } catch (err) {
      reportError(err, "email");
    }
  });
}

async function onCodeSubmit(event) {
  event.preventDefault();
  clearErrors();
  const code = $("code").value.trim();
  if (!/^[0-9]{6}$/.test(code)) return fieldError("code", "Enter the 6-digit code from the e-mail.");
  if (!state.login) return showLogin();

  await busy($("code-submit"), "Signing in…", async () => {
    try {
      const wallet = await state.wallet;
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

      state.login = null;
      $("code").value = "";
      await showCurrent();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED") {
        fieldError("code", "That code is not right, or it has expired. Check the e-mail and try again, or send a new code.");
      } else if (err instanceof ApiError && err.details && err.details.reason === "NO_PENDING_LOGIN") {
        showLogin();
        formError("Your sign-in timed out. Enter your e-mail address again.");
      } else {
        reportError(err, "code");
      }
    }
  });
}

async function onBack() {
  clearErrors();
  await forgetKey();
  state.login = null;
  showLogin();
}

async function newKey(wallet) {
  await forgetKey();
  const key = await wallet.generateKey();
  state.key = { handle: key.handle, publicKey: key.publicKey };
}

async function forgetKey() {
  const key = state.key;
  state.key = null;
  if (!key) return;
  try {
    const wallet = await state.wallet;
    await wallet.forget(key.handle);
  } catch {
    // The module is gone or never loaded: there is nothing left to wipe.
  }
}

// ---- signed in ------------------------------------------------------------

function showSignedIn(me) {
  $("login").hidden = true;
  $("signed-in").hidden = false;
  $("me-email").textContent = me.email || "";

  const acct = me.internalAccount || {};
  $("account-id").textContent = acct.id || "";
  $("account-type").textContent = humanize(acct.type);
  $("account-status").textContent = humanize(acct.status);
  const balance = acct.balance || {};
  $("account-balance").textContent = formatAmount(balance.amount, balance.currency || {});

  const keyEl = $("session-public-key");
  if (state.key) {
    keyEl.textContent = shortKey(state.key.publicKey);
    keyEl.title = state.key.publicKey;
    keyEl.dataset.value = state.key.publicKey;
    $("copy-key").hidden = false;
    $("key-missing").hidden = true;
  } else {
    keyEl.textContent = "not on this device";
    keyEl.removeAttribute("title");
    keyEl.dataset.value = "";
    $("copy-key").hidden = true;
    $("key-missing").hidden = false;
  }

  const expires = Date.parse(me.session && me.session.expiresAt);
  state.expiresAt = Number.isFinite(expires) ? expires : 0;
  const time = $("session-expiry");
  time.dateTime = (me.session && me.session.expiresAt) || "";
  time.title = Number.isFinite(expires) ? "until " + new Date(expires).toLocaleTimeString() : "";
  startCountdown();
  setStatus("You are signed in.");
  $("wallet-title").focus();
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
  const left = state.expiresAt - Date.now();
  $("session-expiry").textContent = formatCountdown(left);
  if (left <= 0) expire();
}

async function expire() {
  stopCountdown();
  state.expiresAt = 0;
  await forgetKey();
  await logoutQuietly();
  showLogin();
  setStatus("Your session has ended. Sign in again.");
}

async function onLogout() {
  stopCountdown();
  state.expiresAt = 0;
  await forgetKey();
  await logoutQuietly();
  showLogin();
  setStatus("You are signed out.");
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
    setStatus("Session key copied.");
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("session-public-key"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    setStatus("Copying is blocked here; the key is selected instead.");
  }
}

// ---- messages -------------------------------------------------------------

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
    if (fields[field]) return fieldError(field, capitalize(fields[field]) + ".");
    if (err.status === 429) {
      return fieldError(field, "Too many attempts. Try again in " + formatWait(err.retryAfter) + ".");
    }
    if (err.status === 401 && err.code === "UNAUTHORIZED") {
      showLogin();
      return formError("Your sign-in was not accepted. Please start again.");
    }
  }
  formError(messageOf(err));
}

function messageOf(err) {
  if (err instanceof ApiError) {
    if (err.status === 0 || err.status >= 500) return "The service is not reachable right now. Try again shortly.";
    return err.message;
  }
  return err && err.message ? err.message : String(err);
}

async function busy(button, text, fn) {
  const buttons = document.querySelectorAll("#login button");
  for (const b of buttons) b.disabled = true;
  button.setAttribute("aria-busy", "true");
  setStatus(text);
  try {
    await fn();
  } finally {
    for (const b of buttons) b.disabled = false;
    button.removeAttribute("aria-busy");
    if ($("status").textContent === text) setStatus("");
  }
}

function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  return capitalize(value.toLowerCase().replaceAll("_", " "));
}

function capitalize(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

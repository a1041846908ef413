// The sign-in page, shown signed out at every view's address: an e-mail
// one-time code, a passkey, or single sign-on (DESIGN.md "Signed retry").
// Each starts this tab's session with a new key (session.js), kept for the
// session, and tells the other tabs.
//
// Flow of a login:
//   1. POST /api/login/start {email} -> {otpEncryptionTargetBundle, email}
//   2. paywallet.generateKey("signing") -> key handle (a non-extractable
//      WebCrypto key: no script, not even the wallet module, can read it)
//   3. paywallet.sealOtp(handle, code, bundle, pinned signer) -> encryptedOtpBundle
//   4. POST /api/login/verify {type: "EMAIL_OTP", encryptedOtpBundle} -> 202 {payloadToSign, requestId}
//   5. paywallet.stamp(handle, payloadToSign) -> Service-Wallet-Signature
//   6. POST /api/login/verify, same body bytes, with Service-Wallet-Signature and Request-Id -> 200 Session
//   7. paywallet.storeSession(handle, {sessionId, expiresAtMs}): the key is
//      kept in the origin's IndexedDB (still non-extractable) for the session

import { api, ApiError, messageOf } from "../api.js";
import { t } from "../i18n.js";
import { formatCountdown, formatWait } from "../format.js";
import { forgetKey, keepKey, newKey, setStatus, showCurrent, showLogin, state, tell, walletFor } from "../session.js";
import { getAssertion, oauthToken, passkeyProblem } from "../webauthn.js";

const $ = (id) => document.getElementById(id);

/** Wires the sign-in page once. */
export function initSignIn() {
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
}

/** Shows the step of the sign-in ("email" or "code"), its field focused. */
export function showSignIn(step) {
  $("passkey-choose").hidden = true;
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

function capitalize(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

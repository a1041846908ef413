// The "Sign-in methods" and "Recovery phrase" parts of the Security view
// (views/security.js).
//
// Sign-in methods lists the wallet's credentials (GET /api/auth/credentials):
// the e-mail code, passkeys, a linked OAuth identity. Adding a passkey asks
// the BFF for creation options, lets the browser make the passkey, and
// registers it with a signed POST /api/auth/credentials; linking the OAuth
// provider does the same with an ID token. Removing one is a signed DELETE,
// which the service refuses when it would leave no way to sign in, or when
// the session signing it was issued by that very credential.
//
// The recovery phrase is exported with a signed POST
// /api/internal-accounts/{id}/export carrying a fresh recipient (ECDH) key
// made for this export only. The wallet module opens the answer and keeps
// the phrase; the page shows the words only after "Reveal", and "Hide" wipes
// them.
//
// Errors stay until the person acts again (another removal, adding or
// linking a method): reloading the list after a refused removal does not
// wipe the reason it was refused.

import { api, ApiError, messageOf } from "../../api.js";
import { t } from "../../i18n.js";
import { signedRetry } from "../../session.js";
import { createPasskey, oauthToken, passkeyProblem, passkeysAvailable } from "../../webauthn.js";

const $ = (id) => document.getElementById(id);

const ctx = {
  wallet: null, // () => Promise<paywallet>
  config: null, // () => GET /api/config
  setStatus: null,
  accountId: "",
  loading: 0,
  loadFailed: false, // the error shown is the list's own, cleared by the next good load
  secret: "", // wasm handle of an exported phrase
};

// The notice under "Export recovery phrase" for each state of the phrase.
// It names the buttons by their text, in whatever language they are in.
const exportNotice = {
  hidden: () => t("security.export.notice.hidden", { reveal: buttonName("export-reveal") }),
  shown: () => t("security.export.notice.shown", { hide: buttonName("export-hide") }),
};

// The message key of each kind of sign-in method.
const TYPE_KEY = {
  EMAIL_OTP: "security.methods.type.emailCode",
  PASSKEY: "security.methods.type.passkey",
  OAUTH: "security.methods.type.oauth",
};

/** The kind of a sign-in method, for a person ("Passkey"). */
function typeText(type) {
  return Object.hasOwn(TYPE_KEY, type) ? t(TYPE_KEY[type]) : String(type || "");
}

export function initCredentials({ wallet, config, setStatus }) {
  ctx.wallet = wallet;
  ctx.config = config;
  ctx.setStatus = setStatus;
  $("credentials-list").addEventListener("click", onListClick);
  // Acting again is when an earlier error no longer applies.
  $("passkey-form").addEventListener("submit", () => showError(""), true);
  $("oauth-link").addEventListener("click", () => showError(""), true);
  $("passkey-form").addEventListener("submit", onAddPasskey);
  $("oauth-link").addEventListener("click", onLinkOAuth);
  $("export-start").addEventListener("click", onExport);
  $("export-reveal").addEventListener("click", onReveal);
  $("export-hide").addEventListener("click", () => hidePhrase(t("security.export.status.wiped")));
}

/** Shows both panels for the wallet account. */
export function showCredentials(accountId) {
  ctx.accountId = accountId || "";
  $("credentials").hidden = false;
  $("export").hidden = false;
  const provider = ctx.config() && ctx.config().oauth;
  $("oauth-link").hidden = !provider;
  if (provider) $("oauth-link").textContent = t("security.methods.link", { provider: provider.name });
  $("passkey-form").hidden = !passkeysAvailable();
  loadCredentials();
}

/** Hides both panels and wipes a phrase still held. */
export function hideCredentials() {
  ctx.loading++;
  ctx.accountId = "";
  $("credentials").hidden = true;
  $("export").hidden = true;
  $("credentials-list").replaceChildren();
  showError("");
  $("export-error").hidden = true;
  $("export-error").textContent = "";
  hidePhrase("");
}

async function loadCredentials() {
  const generation = ++ctx.loading;
  try {
    const { data } = await api("GET", "/api/auth/credentials");
    if (generation !== ctx.loading) return;
    render(Array.isArray(data && data.data) ? data.data : []);
    if (ctx.loadFailed) showError("");
  } catch (err) {
    if (generation !== ctx.loading || (err instanceof ApiError && err.status === 401)) return; // 401: the page signs out
    showError(t("security.methods.error.load", { reason: sentence(messageOf(err)) }));
    ctx.loadFailed = true;
  }
}

function render(list) {
  const items = list.map((c) => {
    const li = document.createElement("li");
    li.className = "credential";
    li.dataset.id = c.id;
    li.dataset.type = c.type;
    const what = document.createElement("span");
    what.className = "credential-type";
    what.textContent = typeText(c.type);
    const name = document.createElement("span");
    name.className = "credential-name";
    name.textContent = c.nickname || "";
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "small secondary";
    remove.dataset.remove = c.id;
    remove.textContent = t("security.methods.remove");
    remove.disabled = list.length < 2;
    remove.title = list.length < 2 ? t("security.methods.onlyOne") : "";
    li.append(what, name, remove);
    return li;
  });
  $("credentials-list").replaceChildren(...items);
}

async function onListClick(event) {
  const button = event.target.closest("button[data-remove]");
  if (!button) return;
  const id = button.dataset.remove;
  const item = button.closest("li");
  const label = item ? methodName(item) : "";
  showError("");
  const question = label ? t("security.methods.removeQuestion", { method: label }) : t("security.methods.removeQuestionUnnamed");
  if (!window.confirm(question)) return;
  button.disabled = true;
  try {
    const res = await signedRetry("DELETE", "/api/auth/credentials/" + id);
    if (res.status !== 204) throw unexpected(res.status);
    ctx.setStatus(t("security.methods.removed"));
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED")) showError(removalProblem(err, label));
  }
  await loadCredentials();
}

// removalProblem says why a sign-in method was not removed, and what to do.
function removalProblem(err, label) {
  if (err instanceof ApiError) {
    switch (err.code) {
      case "WALLET_SIGNATURE_INVALID":
        return label ? t("security.methods.error.removeSelf", { method: label }) : t("security.methods.error.removeSelfUnnamed");
      case "INVALID_INPUT":
        return t("security.methods.error.removeLast");
      case "NOT_FOUND":
        return t("security.methods.error.removeGone");
    }
  }
  return t("security.methods.error.remove", { reason: sentence(messageOf(err)) });
}

async function onAddPasskey(event) {
  event.preventDefault();
  const nickname = $("passkey-name").value.trim();
  if (!/^[\p{L}\p{N} ._\-'()]{1,100}$/u.test(nickname)) {
    return showError(t("security.passkey.error.name", { max: 100 }));
  }
  const button = $("passkey-add");
  button.disabled = true;
  ctx.setStatus(t("security.passkey.status.prompt"));
  try {
    const { data: options } = await api("POST", "/api/passkeys/registration-options");
    const attestation = await createPasskey(options);
    const res = await signedRetry("POST", "/api/auth/credentials", {
      type: "PASSKEY",
      nickname,
      challenge: options.publicKey.challenge,
      attestation,
    });
    if (res.status !== 201) throw unexpected(res.status);
    $("passkey-name").value = "";
    showError("");
    ctx.setStatus(t("security.passkey.status.added"));
    await loadCredentials();
  } catch (err) {
    ctx.setStatus("");
    const why =
      err instanceof ApiError && err.code === "PASSKEY_CREDENTIAL_ALREADY_EXISTS"
        ? t("security.passkey.error.exists")
        : sentence(passkeyProblem(err) || messageOf(err));
    showError(t("security.passkey.error.failed", { reason: why }));
  } finally {
    button.disabled = false;
  }
}

async function onLinkOAuth() {
  const provider = ctx.config().oauth;
  const button = $("oauth-link");
  button.disabled = true;
  try {
    // The nonce of a linking token binds nothing; a throwaway value will do.
    const token = await oauthToken(provider, "link-" + crypto.randomUUID());
    const res = await signedRetry("POST", "/api/auth/credentials", { type: "OAUTH", oidcToken: token });
    if (res.status !== 201) throw unexpected(res.status);
    showError("");
    ctx.setStatus(t("security.oauth.status.linked", { provider: provider.name }));
    await loadCredentials();
  } catch (err) {
    const why =
      err instanceof ApiError && err.code === "INVALID_INPUT" && /already/.test(err.message)
        ? t("security.oauth.error.linked", { provider: provider.name })
        : sentence(messageOf(err));
    showError(t("security.oauth.error.failed", { provider: provider.name, reason: why }));
  } finally {
    button.disabled = false;
  }
}

async function onExport() {
  if (!ctx.accountId) return;
  const button = $("export-start");
  button.disabled = true;
  $("export-error").hidden = true;
  let key = null;
  try {
    const wallet = await ctx.wallet();
    key = await wallet.generateKey("recipient");
    const res = await signedRetry("POST", "/api/internal-accounts/" + ctx.accountId + "/export", {
      clientPublicKey: key.publicKeyUncompressed,
    });
    if (res.status !== 200 || !res.data || typeof res.data.encryptedWalletCredentials !== "string") {
      throw unexpected(res.status);
    }
    const opened = await wallet.openExportBundle(key.handle, res.data.encryptedWalletCredentials, ctx.config().otpSignerPublicKey);
    await forgetSecret();
    ctx.secret = opened.secret;
    $("export-ready").textContent = exportNotice.hidden();
    $("export-ready").hidden = false;
    $("export-reveal").hidden = false;
    $("export-hide").hidden = false;
    $("export-reveal").focus();
    ctx.setStatus(t("security.export.status.ready"));
  } catch (err) {
    $("export-error").textContent = t("security.export.error.failed", { reason: sentence(messageOf(err)) });
    $("export-error").hidden = false;
  } finally {
    button.disabled = false;
    if (key) {
      try {
        await (await ctx.wallet()).forget(key.handle);
      } catch {
        // already gone
      }
    }
  }
}

async function onReveal() {
  if (!ctx.secret) return;
  try {
    const phrase = await (await ctx.wallet()).revealSecret(ctx.secret);
    const words = phrase.split(" ").map((w) => {
      const li = document.createElement("li");
      li.textContent = w;
      return li;
    });
    $("export-words").replaceChildren(...words);
    $("export-words").hidden = false;
    $("export-reveal").hidden = true;
    $("export-ready").textContent = exportNotice.shown();
  } catch (err) {
    hidePhrase("");
    $("export-error").textContent = t("security.export.error.gone", { export: buttonName("export-start") });
    $("export-error").hidden = false;
  }
}

async function hidePhrase(message) {
  $("export-words").replaceChildren();
  $("export-words").hidden = true;
  $("export-ready").hidden = true;
  $("export-reveal").hidden = true;
  $("export-hide").hidden = true;
  await forgetSecret();
  if (message) ctx.setStatus(message);
}

async function forgetSecret() {
  const secret = ctx.secret;
  ctx.secret = "";
  if (!secret) return;
  try {
    await (await ctx.wallet()).forget(secret);
  } catch {
    // nothing to wipe
  }
}

function showError(text) {
  ctx.loadFailed = false;
  $("credentials-error").textContent = text;
  $("credentials-error").hidden = !text;
}

// unexpected is the error for an answer the page does not know, in words
// for the person who will read it.
function unexpected(status) {
  return new Error(t("security.error.unexpected", { status: String(status) }));
}

// sentence makes a message of the service ("wrong code") a sentence.
function sentence(message) {
  const s = String(message || "").trim();
  if (s === "") return "";
  const text = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(text) ? text : text + ".";
}

// methodName names a listed sign-in method for a sentence: its kind and,
// when it has one, its nickname ("Passkey Work laptop").
function methodName(item) {
  const type = item.querySelector(".credential-type").textContent.trim();
  const name = item.querySelector(".credential-name").textContent.trim();
  return name ? t("security.methods.named", { type, name }) : type;
}

// buttonName is the text of a button, for a message that tells the person
// to choose it: the same words as on the button, in whatever language.
function buttonName(id) {
  const el = $(id);
  return el ? el.textContent.trim() : "";
}

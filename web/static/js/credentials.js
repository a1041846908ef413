// The "Sign-in methods" and "Recovery phrase" parts of the signed-in view.
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

import { api, ApiError, messageOf } from "./api.js";
import { signedRetry } from "./sessions.js";
import { createPasskey, oauthToken, passkeyProblem, passkeysAvailable } from "./webauthn.js";

const $ = (id) => document.getElementById(id);

const ctx = {
  wallet: null, // () => Promise<paywallet>
  config: null, // () => GET /api/config
  setStatus: null,
  accountId: "",
  loading: 0,
  secret: "", // wasm handle of an exported phrase
};

const TYPE_TEXT = { EMAIL_OTP: "E-mail code", PASSKEY: "Passkey", OAUTH: "Single sign-on" };

export function initCredentials({ wallet, config, setStatus }) {
  ctx.wallet = wallet;
  ctx.config = config;
  ctx.setStatus = setStatus;
  $("credentials-list").addEventListener("click", onListClick);
  $("passkey-form").addEventListener("submit", onAddPasskey);
  $("oauth-link").addEventListener("click", onLinkOAuth);
  $("export-start").addEventListener("click", onExport);
  $("export-reveal").addEventListener("click", onReveal);
  $("export-hide").addEventListener("click", () => hidePhrase("The recovery phrase is hidden and wiped from this tab."));
}

/** Shows both panels for the wallet account. */
export function showCredentials(accountId) {
  ctx.accountId = accountId || "";
  $("credentials").hidden = false;
  $("export").hidden = false;
  const provider = ctx.config() && ctx.config().oauth;
  $("oauth-link").hidden = !provider;
  if (provider) $("oauth-link").textContent = "Link " + provider.name;
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
  hidePhrase("");
}

async function loadCredentials() {
  const generation = ++ctx.loading;
  try {
    const { data } = await api("GET", "/api/auth/credentials");
    if (generation !== ctx.loading) return;
    render(Array.isArray(data && data.data) ? data.data : []);
    showError("");
  } catch (err) {
    if (generation === ctx.loading) showError("Could not load your sign-in methods: " + messageOf(err));
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
    what.textContent = TYPE_TEXT[c.type] || c.type;
    const name = document.createElement("span");
    name.className = "credential-name";
    name.textContent = c.nickname || "";
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "small secondary";
    remove.dataset.remove = c.id;
    remove.textContent = "Remove";
    remove.disabled = list.length < 2;
    remove.title = list.length < 2 ? "Your only way to sign in cannot be removed" : "";
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
  const label = item ? item.querySelector(".credential-type").textContent + " " + item.querySelector(".credential-name").textContent : "this sign-in method";
  if (!window.confirm("Remove " + label.trim() + "? It will no longer sign in to your wallet, and its sessions end.")) return;
  button.disabled = true;
  try {
    const res = await signedRetry("DELETE", "/api/auth/credentials/" + id);
    if (res.status !== 204) throw new Error("unexpected answer " + res.status);
    ctx.setStatus("Sign-in method removed.");
  } catch (err) {
    if (err instanceof ApiError && err.code === "WALLET_SIGNATURE_INVALID") {
      showError("A sign-in method cannot remove itself: sign in another way, then remove it.");
    } else {
      showError("Could not remove it: " + messageOf(err));
    }
  }
  await loadCredentials();
}

async function onAddPasskey(event) {
  event.preventDefault();
  const nickname = $("passkey-name").value.trim();
  if (!/^[\p{L}\p{N} ._\-'()]{1,100}$/u.test(nickname)) {
    return showError("Name the passkey with letters, numbers, spaces and . _ - ' ( ), up to 100 characters.");
  }
  const button = $("passkey-add");
  button.disabled = true;
  ctx.setStatus("Follow your browser's prompt to create the passkey…");
  try {
    const { data: options } = await api("POST", "/api/passkeys/registration-options");
    const attestation = await createPasskey(options);
    const res = await signedRetry("POST", "/api/auth/credentials", {
      type: "PASSKEY",
      nickname,
      challenge: options.publicKey.challenge,
      attestation,
    });
    if (res.status !== 201) throw new Error("unexpected answer " + res.status);
    $("passkey-name").value = "";
    showError("");
    ctx.setStatus("Passkey added. You can now sign in with it.");
    await loadCredentials();
  } catch (err) {
    ctx.setStatus("");
    showError("The passkey was not added: " + (passkeyProblem(err) || messageOf(err)));
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
    if (res.status !== 201) throw new Error("unexpected answer " + res.status);
    showError("");
    ctx.setStatus(provider.name + " linked. You can now sign in with it.");
    await loadCredentials();
  } catch (err) {
    showError("Could not link " + provider.name + ": " + messageOf(err));
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
      throw new Error("unexpected answer " + res.status);
    }
    const opened = await wallet.openExportBundle(key.handle, res.data.encryptedWalletCredentials, ctx.config().otpSignerPublicKey);
    await forgetSecret();
    ctx.secret = opened.secret;
    $("export-ready").hidden = false;
    $("export-reveal").hidden = false;
    $("export-hide").hidden = false;
    $("export-reveal").focus();
    ctx.setStatus("Your recovery phrase is ready in this tab. Reveal it only where nobody can see your screen.");
  } catch (err) {
    $("export-error").textContent = "The export did not work: " + messageOf(err);
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
  } catch (err) {
    hidePhrase("");
    $("export-error").textContent = "The phrase is no longer in this tab: " + messageOf(err);
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
  $("credentials-error").textContent = text;
  $("credentials-error").hidden = !text;
}

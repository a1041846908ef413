// Passkeys and OAuth in the browser: the WebAuthn ceremonies and the OpenID
// Connect pop-up. Nothing here holds a wallet key: the passkey signs a
// challenge the service bound to this tab's wallet key, and the ID token's
// nonce is the SHA-256 of that key, so neither can sign a stranger in.

import { t } from "./i18n.js";

/** base64url (no padding) of bytes. */
export function toB64url(bytes) {
  const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let s = "";
  for (const b of u8) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Bytes of a base64url string (padding optional). */
export function fromB64url(text) {
  const s = text.replaceAll("-", "+").replaceAll("_", "/");
  const bin = atob(s + "=".repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** Whether this browser can use passkeys at all. */
export function passkeysAvailable() {
  return typeof window.PublicKeyCredential === "function" && !!navigator.credentials;
}

/**
 * Whether this browser offers Secure Payment Confirmation (Chromium, where
 * the platform has it switched on).
 */
export async function paymentsConfirmable() {
  try {
    return typeof window.PaymentRequest === "function" &&
      typeof PaymentRequest.securePaymentConfirmationAvailability === "function" &&
      (await PaymentRequest.securePaymentConfirmationAvailability()) === "available";
  } catch {
    return false;
  }
}

/**
 * Creates a passkey from the BFF's creation options ({publicKey: …}, binary
 * members base64url) and returns the attestation as the service wants it.
 */
export async function createPasskey(options) {
  const pk = options.publicKey;
  const publicKey = {
    ...pk,
    challenge: fromB64url(pk.challenge),
    user: { ...pk.user, id: fromB64url(pk.user.id) },
    excludeCredentials: (pk.excludeCredentials || []).map((c) => ({ type: c.type, id: fromB64url(c.id) })),
  };
  let cred = null;
  if (await paymentsConfirmable()) {
    // A passkey the browser's Secure Payment Confirmation can use too
    // (the "payment" extension): the browser then shows the payee and the
    // amount of a payment it confirms (stepup.js). A browser that refuses
    // the extension for this authenticator gets an ordinary passkey.
    try {
      cred = await navigator.credentials.create({
        publicKey: {
          ...publicKey,
          authenticatorSelection: { ...publicKey.authenticatorSelection, residentKey: "required", requireResidentKey: true, userVerification: "required" },
          extensions: { ...(publicKey.extensions || {}), payment: { isPayment: true } },
        },
      });
    } catch (err) {
      if (!err || err.name !== "NotSupportedError") throw err;
    }
  }
  if (!cred) cred = await navigator.credentials.create({ publicKey });
  if (!cred) throw new Error("no passkey was created");
  const transports = typeof cred.response.getTransports === "function" ? cred.response.getTransports() : [];
  return {
    credentialId: toB64url(cred.rawId),
    clientDataJson: toB64url(cred.response.clientDataJSON),
    attestationObject: toB64url(cred.response.attestationObject),
    transports: transports.filter((t) => ["usb", "nfc", "ble", "internal", "hybrid"].includes(t)),
  };
}

/**
 * Signs the service's login challenge with the passkey. The challenge is
 * hex text; its UTF-8 bytes (not the digest it spells) are the WebAuthn
 * challenge.
 */
export async function getAssertion({ challenge, credentialId, rpId, userVerification }) {
  const cred = await navigator.credentials.get({
    publicKey: {
      challenge: new TextEncoder().encode(challenge),
      allowCredentials: [{ type: "public-key", id: fromB64url(credentialId) }],
      rpId,
      userVerification: userVerification || "required",
      timeout: 120000,
    },
  });
  if (!cred) throw new Error("the passkey did not answer");
  return assertionJSON(cred);
}

/** A WebAuthn assertion (a PublicKeyCredential from get) as the service takes it. */
export function assertionJSON(cred) {
  const r = cred.response;
  const out = {
    credentialId: toB64url(cred.rawId),
    clientDataJson: toB64url(r.clientDataJSON),
    authenticatorData: toB64url(r.authenticatorData),
    signature: toB64url(r.signature),
  };
  if (r.userHandle && r.userHandle.byteLength > 0) out.userHandle = toB64url(r.userHandle);
  return out;
}

/** A friendly sentence for a WebAuthn failure. */
export function passkeyProblem(err) {
  if (err && err.name === "NotAllowedError") return t("signin.passkey.error.cancelled");
  if (err && err.name === "InvalidStateError") return t("signin.passkey.error.exists");
  if (err && err.name === "SecurityError") return t("signin.passkey.error.address");
  return null;
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Signs in with the OpenID Connect provider in a pop-up and resolves to an
 * ID token whose nonce is the SHA-256 (hex) of clientPublicKey. The
 * provider sends the pop-up back to /oauth-callback.html, which hands the
 * token over on a BroadcastChannel (the pop-up has no opener: the wallet's
 * pages isolate themselves from other origins).
 */
export async function oauthToken(provider, clientPublicKey, { signal } = {}) {
  const nonce = await sha256Hex(clientPublicKey);
  const state = toB64url(crypto.getRandomValues(new Uint8Array(16)));
  const url = new URL(provider.authorizationEndpoint);
  url.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: location.origin + "/oauth-callback.html",
    response_type: "id_token",
    response_mode: "fragment",
    scope: "openid email",
    nonce,
    state,
  }).toString();
  const channel = new BroadcastChannel("wallet-oauth");
  try {
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(t("signin.oauth.error.timeout"))), 5 * 60 * 1000);
      // The page cannot see the pop-up close (it is on the provider's
      // origin, cut off by Cross-Origin-Opener-Policy), so the person ends
      // the wait: Cancel, or another way of signing in.
      if (signal) {
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new DOMException("the sign-in was cancelled", "AbortError"));
        }, { once: true });
      }
      channel.onmessage = (event) => {
        const m = event.data || {};
        if (m.state !== state) return;
        clearTimeout(timer);
        if (m.error) reject(new Error(t("signin.oauth.error.refused", { error: String(m.error) })));
        else if (typeof m.idToken === "string" && m.idToken) resolve(m.idToken);
        else reject(new Error(t("signin.oauth.error.noToken")));
      };
    });
    const popup = window.open(url.toString(), "wallet-oauth", "popup,width=480,height=640");
    if (!popup) throw new Error(t("signin.oauth.error.blocked"));
    return await answer;
  } finally {
    channel.close();
  }
}

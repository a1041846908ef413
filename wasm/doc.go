//go:build js && wasm

// Command wasm is the browser wallet: the only place in the browser where
// private keys exist.
//
// Built with GOOS=js GOARCH=wasm (see build.sh), it sets globalThis.paywallet
// to a frozen object of Promise-returning methods and then calls
// globalThis.paywalletReady() if the page defined it. web/static/js/wallet.js
// loads it.
//
// # Trust boundary
//
// Two kinds of private key live here: client key pairs (generateKey), which
// prove possession in the OTP login and are the HPKE recipient of a
// service-delivered session key or of a wallet export, and session signing
// keys (decryptSessionKey). The OTP target key is the service's; this module
// only checks the signed bundle that carries its public half against a
// pinned signer before sealing the code to it. A private key never crosses
// into JavaScript: the page holds an opaque, random handle, and every method
// but revealSecret returns only public keys, sealed bundles, stamps, booleans
// and handles.
// forget wipes a key and drops its handle; the page calls it on logout, and
// setExpiry makes the module do it by itself at session expiry.
//
// Wallet export brings the one secret that does cross: the mnemonic. It stays
// in wasm memory, under a secret handle, until the person asks to see it;
// only revealSecret hands it to the page. Secret handles look like key
// handles but are not interchangeable with them.
//
// The boundary is only as strong as the page around it: wasm linear memory
// is readable by any script running in the page, so this module narrows the
// exposure (no key bytes in JavaScript values, short-lived keys, wiping) but
// does not replace a content security policy.
//
// # Calls
//
// Every call returns a Promise.
//
//   - generateKey() -> {handle, publicKey, publicKeyUncompressed}: a new
//     client key; publicKey is compressed (66 hex), publicKeyUncompressed is
//     the 130-hex form sent as clientPublicKey.
//   - verifyTargetBundle(bundle, pinnedSignerHex) -> {targetPublic}: checks an
//     otpEncryptionTargetBundle against the pinned signer.
//   - sealOtp(handle, code, bundle, pinnedSignerHex) -> string: verifies the
//     target bundle, then seals {otp_code, public_key} to it: the
//     encryptedOtpBundle.
//   - decryptSessionKey(handle, bundle) -> {handle, publicKey,
//     publicKeyUncompressed}: opens an encryptedSessionSigningKey with the
//     client key and keeps the session key under a new handle.
//   - stamp(handle, payload) -> string: the Service-Wallet-Signature header
//     over payload.
//   - hpkeSeal(recipientPublicKeyHex, plaintext) -> {encappedPublic,
//     ciphertext}: seals the string plaintext (UTF-8) to a P-256 public key
//     (66 or 130 hex) with the bundle suite and returns the 65-byte
//     encapsulated key and the ciphertext, both lower-case hex. It uses no
//     key of the module; the wallet does not need it (sealOtp seals the
//     OTP), the browser benchmark (internal/bench/browser) times it.
//   - openExportBundle(handle, bundle, pinnedSignerHex) -> {secret,
//     organizationId}: checks an export bundle (encryptedWalletCredentials)
//     against the pinned signer, opens it with the key under handle and keeps
//     the plaintext, the mnemonic, under the new secret handle. The page
//     compares organizationId with the one it expects.
//   - revealSecret(secretHandle) -> string: the plaintext kept under a secret
//     handle. Call it only when the person asks to reveal the phrase.
//   - setExpiry(handle, expiresAtMs) -> boolean: the key or secret under
//     handle is wiped at that Date.now() time (a timer does it, and every call
//     checks it first, so an expired handle is unknown even if the timer is
//     late). A later call replaces the time; a time already past wipes at
//     once and resolves false.
//   - forget(handle) -> boolean: wipes a key or a secret and drops its
//     handle; false if there was none.
//   - validateAccountInfo, accountTypes, requiredBeneficiaryFields: below.
//
// The object also has version, a string that changes with the calls.
//
// # Account validation
//
// validateAccountInfo(body), accountTypes() and
// requiredBeneficiaryFields(accountType, currency, beneficiaryType) hold no
// keys: they run paywallet/shared/accountrules, the code the service runs on
// POST /customers/external-accounts, so the page can show the same field
// errors before sending anything. validateAccountInfo converts the plain
// object into the tree encoding/json would decode from its JSON (see
// accounts.go) and resolves with the service's details.errors entries, or an
// empty array.
//
// # Rules for this package
//
//   - Every method checks its argument count, types and formats and rejects
//     its Promise with an Error whose message starts with the method name,
//     e.g. "stamp: unknown key handle".
//   - A panic inside a method rejects that Promise; the instance stays alive.
//   - It imports only the standard library and paywallet/shared/...; never
//     encoding/json, net/http or Fiber, and never fmt directly (module
//     size, attack surface; fmt itself is linked in indirectly, through
//     dependencies). deps_test.go checks this on the host.
package main

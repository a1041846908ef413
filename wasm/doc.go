//go:build js && wasm

// Command wasm is the browser wallet's brain: it creates and uses the
// wallet's keys, seals, opens, checks and stamps.
//
// Built with GOOS=js GOARCH=wasm (see build.sh), it sets globalThis.paywallet
// to an object of Promise-returning methods, calls
// globalThis.paywalletReady(directCalls) if the page defined it (the loader
// installs the direct calls there), and then freezes the object.
// web/static/js/wallet.js loads it.
//
// # Trust boundary
//
// Every private key is a non-extractable WebCrypto CryptoKey that this
// module makes (crypto.subtle.generateKey, extractable false) and uses
// (sign, deriveBits): no script in the page, and not this module either,
// can read its bytes, and the P-256 arithmetic is the browser's, native
// and constant-time. A key has one purpose, fixed when it is made:
// "signing" keys (ECDSA, usages ["sign"]) are the OTP client key and the
// session keys, "recipient" keys (ECDH, ["deriveBits"]) receive an export
// bundle or a legacy encryptedSessionSigningKey. The page holds opaque,
// random handles; behind them are CryptoKey objects, never bytes.
//
// The one exception is a session key the service delivers sealed (the
// legacy uncompressed clientPublicKey path): decryptSessionKey opens it,
// imports the 32-byte scalar at once as a non-extractable ECDSA key
// (PKCS#8) and zeroes the copies of the scalar and of the Diffie-Hellman
// output it holds, in Go and in JavaScript. (The standard library's HMAC
// state, which HPKE's key schedule passes through, cannot be reached and
// is left to the garbage collector.)
//
// The session's key outlives the tab in the origin's IndexedDB
// (storeSession, resumeSession, deleteSession; vault.go): a CryptoKey is
// stored by structured clone and stays non-extractable, so a reload, a
// second tab or a browser restart within the session can sign.
//
// Wallet export brings the one secret that does cross into JavaScript: the
// mnemonic. It stays in wasm memory, under a secret handle, until the
// person asks to see it; only revealSecret hands it to the page. Secret
// handles look like key handles but are not interchangeable with them.
// Wasm memory is readable by any script in the page, which is why no key
// is ever kept there.
//
// Go does the protocol around WebCrypto: the formats, the checks, HPKE's
// key schedule and AES-GCM (paywallet/shared/walletcrypto, over the
// Diffie-Hellman output WebCrypto computes). The hot calls (stamp,
// generateKey, hpkeSeal, sealOtp) are flows (flow.go): they hand
// JavaScript the WebCrypto Promises of each round and enter Go once per
// round. Entering Go through a js.Func costs more than most WebCrypto
// calls do, so the page's loader installs direct calls (direct.go and
// web/static/js/direct.js): each Go step runs as a function the module
// exports (go:wasmexport), and strings and results cross through a scratch
// buffer in wasm memory.
//
// # Calls
//
// Every call returns a Promise.
//
//   - generateKey(purpose = "signing") -> {handle, publicKey,
//     publicKeyUncompressed, purpose}: a new key of that purpose ("signing"
//     or "recipient"); publicKey is compressed (66 hex), publicKeyUncompressed
//     the 130-hex form.
//   - verifyTargetBundle(bundle, pinnedSignerHex) -> {targetPublic}: checks an
//     otpEncryptionTargetBundle against the pinned signer.
//   - sealOtp(signingHandle, code, bundle, pinnedSignerHex) -> string:
//     verifies the target bundle, then seals {otp_code, public_key} to it:
//     the encryptedOtpBundle.
//   - decryptSessionKey(recipientHandle, bundle) -> {handle, publicKey,
//     publicKeyUncompressed, purpose}: opens an encryptedSessionSigningKey
//     and keeps the session key, a signing key, under a new handle.
//   - stamp(signingHandle, payload) -> string: the Service-Wallet-Signature
//     header over payload.
//   - hpkeSeal(recipientPublicKeyHex, plaintext) -> {encappedPublic,
//     ciphertext}: seals the string plaintext (UTF-8) to a P-256 public key
//     (66 or 130 hex) with the bundle suite and returns the 65-byte
//     encapsulated key and the ciphertext, both lower-case hex. It uses no
//     key of the module; the browser benchmark (internal/bench/browser)
//     times it.
//   - openExportBundle(recipientHandle, bundle, pinnedSignerHex) -> {secret,
//     organizationId}: checks an export bundle (encryptedWalletCredentials)
//     against the pinned signer, opens it and keeps the plaintext, the
//     mnemonic, under the new secret handle. The page compares
//     organizationId with the one it expects.
//   - revealSecret(secretHandle) -> string: the plaintext kept under a secret
//     handle. Call it only when the person asks to reveal the phrase.
//   - storeSession(signingHandle, {sessionId, expiresAtMs}) -> true: keeps
//     the key and what resuming needs in IndexedDB, replacing any other
//     session. It rejects, with a reason containing "does not let the
//     wallet keep keys", where IndexedDB is missing or refuses.
//   - resumeSession() -> null | {handle, publicKey, publicKeyUncompressed,
//     purpose, sessionId, expiresAtMs}: the stored session under a new
//     handle of this tab, which expires with it; an expired record is
//     deleted and gives null.
//   - deleteSession(sessionId?) -> boolean: deletes the stored session (if
//     sessionId is given, only when it is that session).
//   - setExpiry(handle, expiresAtMs) -> boolean: the key or secret under
//     handle is dropped at that Date.now() time (a timer does it, and every
//     call checks it first, so an expired handle is unknown even if the
//     timer is late). A later call replaces the time; a time already past
//     drops it at once and resolves false.
//   - forget(handle) -> boolean: drops a key (a CryptoKey has no bytes
//     here to wipe) or wipes a secret, and forgets its handle; false if
//     there was none.
//   - validateAccountInfo, accountTypes, accountForm, requiredBeneficiaryFields: below.
//
// The object also has version, a string that changes with the calls.
//
// # Account validation
//
// validateAccountInfo(body), accountTypes(), accountForm() and
// requiredBeneficiaryFields(accountType, currency, beneficiaryType) hold no
// keys: they run paywallet/shared/accountrules, the code the service runs on
// POST /customers/external-accounts, so the page can show the same field
// errors before sending anything. accountForm() describes the add-recipient
// form from the same table the validator reads (accountrules.Form): the page
// keeps no list of account types or fields of its own. validateAccountInfo converts the plain
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
//     encoding/json, net/http or Fiber, never the standard library's curve
//     code or HPKE (WebCrypto does the curve work), and never fmt directly
//     (module size, attack surface; fmt itself is linked in indirectly,
//     through dependencies). deps_test.go checks this on the host.
package main

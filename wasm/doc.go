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
// service-delivered session key, and session signing keys
// (decryptSessionKey). The OTP target key is the service's; this module only
// checks the signed bundle that carries its public half against a pinned
// signer before sealing the code to it. A private key never crosses into
// JavaScript: the page holds an opaque, random handle, and every method
// returns only public keys, sealed bundles, stamps and booleans. forget wipes
// a key and drops its handle; the page calls it on logout and at session
// expiry.
//
// The boundary is only as strong as the page around it: wasm linear memory
// is readable by any script running in the page, so this module narrows the
// exposure (no key bytes in JavaScript values, short-lived keys, wiping) but
// does not replace a content security policy.
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

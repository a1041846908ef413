//go:build js && wasm

package main

import (
	"errors"
	"syscall/js"
	"unsafe"

	"paywallet/shared/walletcrypto"
)

// wallet holds the state behind globalThis.paywallet.
type wallet struct {
	keys *keyStore
}

// newWallet returns the object that becomes globalThis.paywallet, not yet
// frozen (the loader may put direct calls in place of the flows first;
// main.go freezes it), and the wallet behind it.
func newWallet(keys *keyStore) (js.Value, *wallet) {
	w := &wallet{keys: keys}
	obj := js.Global().Get("Object").New()
	for _, m := range []struct {
		name string
		fn   method
	}{
		{"verifyTargetBundle", w.verifyTargetBundle},
		{"decryptSessionKey", w.decryptSessionKey},
		{"forget", w.forget},
		{"setExpiry", w.setExpiry},
		{"openExportBundle", w.openExportBundle},
		{"storeSession", w.storeSession},
		{"resumeSession", w.resumeSession},
		{"deleteSession", w.deleteSession},
		{"revealSecret", w.revealSecret},
		{"validateAccountInfo", w.validateAccountInfo},
		{"accountTypes", w.accountTypes},
		{"accountForm", w.accountForm},
		{"requiredBeneficiaryFields", w.requiredBeneficiaryFields},
	} {
		obj.Set(m.name, promiseFunc(m.name, m.fn))
	}
	for _, m := range w.flowMethods() {
		obj.Set(m.name, flowFunc(m.name, m.fn))
	}
	obj.Set("version", version)
	// The loader's glue sets "direct" when it installs the direct calls.
	obj.Set("calls", "js.Func")
	return obj, w
}

// flowMethods are the hot calls: flows (flow.go), no goroutine per call.
func (w *wallet) flowMethods() []flowMethod {
	return []flowMethod{
		{"generateKey", w.generateKey},
		{"sealOtp", w.sealOtp},
		{"stamp", w.stamp},
		{"hpkeSeal", hpkeSeal},
	}
}

// verifyTargetBundle(bundle, pinnedSignerHex) -> {targetPublic}
func (w *wallet) verifyTargetBundle(args []js.Value) (any, error) {
	if err := checkCount(args, "bundle", "pinnedSignerHex"); err != nil {
		return nil, err
	}
	bundle, err := stringArg(args[0], "bundle", maxBundle, true)
	if err != nil {
		return nil, err
	}
	signer, err := signerArg(args[1])
	if err != nil {
		return nil, err
	}
	target, err := verifyTarget(bundle, signer)
	if err != nil {
		return nil, err
	}
	return map[string]any{"targetPublic": target.UncompressedHex()}, nil
}

// decryptSessionKey(handle, bundle) -> {handle, publicKey, publicKeyUncompressed}
func (w *wallet) decryptSessionKey(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "bundle"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	bundle, err := stringArg(args[1], "bundle", maxBundle, true)
	if err != nil {
		return nil, err
	}
	k, err := w.keys.get(handle, purposeRecipient)
	if err != nil {
		return nil, err
	}
	scalar, err := walletcrypto.OpenCredentialBundle(ecdhKey{private: k.private, public: k.public}, bundle)
	switch {
	case errors.Is(err, walletcrypto.ErrDecrypt):
		return nil, errors.New("bundle does not open with this key")
	case err != nil:
		return nil, errors.New("invalid session key bundle: " + cryptoReason(err))
	}
	kp, err := importScalar(scalar)
	clear(scalar)
	if err != nil {
		return nil, err
	}
	return w.keep(&key{private: kp.private, public: kp.public, purpose: purposeSigning})
}

// forget(handle) -> boolean; handle is a key or a secret handle.
func (w *wallet) forget(args []js.Value) (any, error) {
	if err := checkCount(args, "handle"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	return w.keys.forget(handle)
}

// setExpiry(handle, expiresAtMs) -> boolean; handle is a key or a secret
// handle, expiresAtMs a Date.now() time. It resolves false if that time has
// already passed (the handle is then wiped at once).
func (w *wallet) setExpiry(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "expiresAtMs"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	at := args[1]
	// 2^53 keeps the conversion exact; NaN fails both tests.
	if at.Type() != js.TypeNumber || !(at.Float() > 0 && at.Float() < 1<<53) {
		return nil, errors.New("expiresAtMs must be a positive number of milliseconds (Date.now())")
	}
	return w.keys.setExpiry(handle, int64(at.Float()))
}

// openExportBundle(handle, bundle, pinnedSignerHex) -> {secret, organizationId}
//
// It opens an export bundle (encryptedWalletCredentials) with the key under
// handle after checking its signature against the pinned signer, and keeps
// the plaintext (the mnemonic) under a new secret handle: revealSecret
// returns it, forget wipes it.
func (w *wallet) openExportBundle(args []js.Value) (any, error) {
	if err := checkCount(args, "handle", "bundle", "pinnedSignerHex"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	bundle, err := stringArg(args[1], "bundle", maxBundle, true)
	if err != nil {
		return nil, err
	}
	signer, err := signerArg(args[2])
	if err != nil {
		return nil, err
	}
	k, err := w.keys.get(handle, purposeRecipient)
	if err != nil {
		return nil, err
	}
	org, secret, err := walletcrypto.OpenExportBundleWith(webCrypto{}, bundle, signer, ecdhKey{private: k.private, public: k.public})
	if err != nil {
		return nil, bundleError("export bundle", err)
	}
	h, err := w.keys.addSecret(secret)
	if err != nil {
		clear(secret)
		return nil, err
	}
	return map[string]any{"secret": h, "organizationId": org}, nil
}

// revealSecret(secretHandle) -> string: the explicit reveal, the one call
// that hands a secret to JavaScript.
func (w *wallet) revealSecret(args []js.Value) (any, error) {
	if err := checkCount(args, "secretHandle"); err != nil {
		return nil, err
	}
	handle, err := handleArg(args[0])
	if err != nil {
		return nil, err
	}
	var v js.Value
	err = w.keys.useSecret(handle, func(b []byte) error {
		// A string over the stored bytes rather than a copy: JavaScript
		// decodes it into its own string right here, and the only Go copy
		// stays the one forget zeroes.
		v = js.ValueOf(unsafe.String(unsafe.SliceData(b), len(b)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// keep stores k and describes it to JavaScript by handle, public keys and
// purpose only.
func (w *wallet) keep(k *key) (map[string]any, error) {
	h, err := w.keys.add(k)
	if err != nil {
		return nil, err
	}
	return keyInfo(h, k), nil
}

func keyInfo(handle string, k *key) map[string]any {
	return map[string]any{
		"handle":                handle,
		"publicKey":             k.public.CompressedHex(),
		"publicKeyUncompressed": k.public.UncompressedHex(),
		"purpose":               k.purpose.String(),
	}
}

// signerArg parses the pinned signer public key (66 or 130 hex characters).
func signerArg(v js.Value) (*walletcrypto.PublicKey, error) {
	s, err := stringArg(v, "pinnedSignerHex", maxKeyHex, true)
	if err != nil {
		return nil, err
	}
	signer, err := walletcrypto.ParsePublicKeyHex(s)
	if err != nil {
		return nil, errors.New("pinnedSignerHex is not a P-256 public key in hex")
	}
	return signer, nil
}

// verifyTarget checks the target bundle's signature against the pinned
// signer and returns targetPublic.
func verifyTarget(bundle string, signer *walletcrypto.PublicKey) (*walletcrypto.PublicKey, error) {
	target, err := walletcrypto.VerifyTargetBundleWith(webCrypto{}, bundle, signer)
	if err != nil {
		return nil, bundleError("target bundle", err)
	}
	return target, nil
}

// bundleError turns a walletcrypto error about a signed bundle (what names
// it) into a rejection reason.
func bundleError(what string, err error) error {
	switch {
	case errors.Is(err, walletcrypto.ErrSignerMismatch):
		return errors.New(what + " is not signed by the pinned signer")
	case errors.Is(err, walletcrypto.ErrInvalidSignature):
		return errors.New(what + " signature does not verify")
	case errors.Is(err, walletcrypto.ErrDecrypt):
		return errors.New(what + " does not open with this key")
	}
	return errors.New("invalid " + what + ": " + cryptoReason(err))
}

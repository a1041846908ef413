package browser

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"

	"paywallet/shared/walletcrypto"
)

// payload is what the stamps sign: a 118-byte activity body, the size of
// the wallet's usual payloadToSign.
const payload = `{"type":"ACTIVITY_TYPE_CREATE_QUOTE","timestampMs":"1763900000000","organizationId":"org_2c41f0e8","amount":"1000.00"}`

// otpCode is the code both sides seal.
const otpCode = "482913"

// inputs are the keys and bundles both sides of every pair work on, made in
// Go with walletcrypto, so that Go can check what the page computes.
type inputs struct {
	client    *walletcrypto.PublicKey  // the wasm recipient key of the session bundle (generateKey("recipient"))
	otpClient *walletcrypto.PublicKey  // the wasm signing key the OTP names (generateKey("signing"))
	session   *walletcrypto.PrivateKey // the session key both stampers sign with
	embedded  *walletcrypto.PrivateKey // the JS side's client key (Turnkey's embeddedKey)
	recipient *walletcrypto.PrivateKey // what hpke-seal seals to
	signer    *walletcrypto.PrivateKey // the pinned signer of the OTP target bundle
	target    *walletcrypto.PrivateKey // the OTP target

	plaintext                        string // what hpke-seal seals
	sessionBundleWasm, sessionBundle string // the session key sealed to client / to embedded
	targetBundle                     string
}

// newInputs makes fresh keys and bundles for the wasm client keys: clientHex
// receives the session key, otpClientHex is named in the OTP.
// The session key travels to the wasm side the way it does in the wallet,
// as a credential bundle to the client key; the JS side gets it as its
// private key in hex, as ApiKeyStamper takes it.
func newInputs(clientHex, otpClientHex string) (*inputs, error) {
	client, err := walletcrypto.ParsePublicKeyHex(clientHex)
	if err != nil {
		return nil, fmt.Errorf("the page's client key: %w", err)
	}
	otpClient, err := walletcrypto.ParsePublicKeyHex(otpClientHex)
	if err != nil {
		return nil, fmt.Errorf("the page's OTP client key: %w", err)
	}
	in := &inputs{client: client, otpClient: otpClient}
	for _, k := range []**walletcrypto.PrivateKey{&in.session, &in.embedded, &in.recipient, &in.signer, &in.target} {
		if *k, err = walletcrypto.GenerateKey(); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256([]byte("paywallet browser bench"))
	in.plaintext = hex.EncodeToString(sum[:]) // 64 characters: a sealed key's size
	if in.sessionBundleWasm, err = walletcrypto.SealSessionKey(client, in.session); err != nil {
		return nil, err
	}
	if in.sessionBundle, err = walletcrypto.SealSessionKey(in.embedded.PublicKey(), in.session); err != nil {
		return nil, err
	}
	if in.targetBundle, err = walletcrypto.NewTargetBundle(in.signer, in.target.PublicKey()); err != nil {
		return nil, err
	}
	return in, nil
}

// pageJSON is the argument of bench.setup.
func (in *inputs) pageJSON() string {
	pub := in.session.PublicKey().Uncompressed() // 04 || x || y
	b64 := base64.RawURLEncoding.EncodeToString
	b, err := json.Marshal(map[string]any{
		"payload":           payload,
		"plaintext":         in.plaintext,
		"recipient":         in.recipient.PublicKey().UncompressedHex(),
		"sessionBundleWasm": in.sessionBundleWasm,
		"sessionBundleJs":   in.sessionBundle,
		"embeddedKey":       hex.EncodeToString(in.embedded.Bytes()),
		"sessionPublicKey":  in.session.PublicKey().CompressedHex(),
		"sessionPrivateKey": hex.EncodeToString(in.session.Bytes()),
		"sessionJwk": map[string]string{
			"kty": "EC", "crv": "P-256",
			"d": b64(in.session.Bytes()), "x": b64(pub[1:33]), "y": b64(pub[33:65]),
		},
		"otpCode":      otpCode,
		"targetBundle": in.targetBundle,
		"pinnedSigner": in.signer.PublicKey().UncompressedHex(),
	})
	if err != nil {
		panic(err) // strings only
	}
	return string(b)
}

// check verifies one output of every implementation (bench.samples) in Go
// and returns what it checked. Every sample must have a check, so an
// implementation added to the page without one fails here.
func (in *inputs) check(samples map[string]any) ([]string, error) {
	var errs []error
	fail := func(key string, err error) { errs = append(errs, fmt.Errorf("%s: %w", key, err)) }
	checks := map[string]func(key string) error{}
	var verified []string

	stamps := []string{"stamp/wasm", "stamp/turnkey-js", "stamp/turnkey-js-purejs"}
	for _, key := range stamps {
		checks[key] = func(key string) error {
			header, err := sample[string](samples, key)
			if err != nil {
				return err
			}
			return in.verifyStamp(header)
		}
	}
	for _, key := range []string{"stamp/webcrypto", "stamp/webcrypto-worker"} {
		checks[key] = func(key string) error {
			s, err := sample[string](samples, key)
			if err != nil {
				return err
			}
			return in.verifyP1363(s)
		}
	}
	verified = append(verified, "stamp: the wasm and Turnkey stamp headers parse (walletcrypto.ParseStamp) and verify over the payload (Stamp.Verify) under the session key, and so do the WebCrypto r||s signatures (page and Worker)")

	for _, key := range []string{"hpke-seal/wasm", "hpke-seal/turnkey-js"} {
		checks[key] = func(key string) error {
			pt, err := in.openSeal(samples, key)
			if err != nil {
				return err
			}
			if string(pt) != in.plaintext {
				return fmt.Errorf("opened to %q, want %q", pt, in.plaintext)
			}
			return nil
		}
	}
	verified = append(verified, "hpke-seal: the wasm and Turnkey ciphertexts open in Go (walletcrypto.Open) with the recipient's key to the plaintext")

	checks["hpke-open/wasm"] = func(key string) error {
		k, err := sample[keySample](samples, key)
		if err != nil {
			return err
		}
		return in.sameKey(k.PublicKey, k.PublicKeyUncompressed, in.session.PublicKey())
	}
	checks["hpke-open/turnkey-js"] = func(key string) error {
		k, err := sample[keySample](samples, key)
		if err != nil {
			return err
		}
		if k.PrivateKey != hex.EncodeToString(in.session.Bytes()) {
			return errors.New("decrypted a different session key")
		}
		return in.sameKey(k.PublicKey, "", in.session.PublicKey())
	}
	verified = append(verified, "hpke-open: both sides opened the session key Go sealed (same public key; Turnkey's decrypted scalar equals it)")

	for _, key := range []string{"otp-seal/wasm", "otp-seal/turnkey-js"} {
		checks[key] = func(key string) error {
			bundle, err := sample[string](samples, key)
			if err != nil {
				return err
			}
			pt, err := walletcrypto.OpenBundle(in.target, bundle)
			if err != nil {
				return err
			}
			if want := walletcrypto.OTPPlaintext(otpCode, in.otpClient.UncompressedHex()); !bytes.Equal(pt, want) {
				return fmt.Errorf("OTP plaintext %q, want %q", pt, want)
			}
			return nil
		}
	}
	verified = append(verified, "otp-seal: both encryptedOtpBundles open in Go (walletcrypto.OpenBundle) with the target key to the same OTP plaintext")

	checks["keygen/wasm"] = func(key string) error {
		k, err := sample[keySample](samples, key)
		if err != nil {
			return err
		}
		p, err := walletcrypto.ParsePublicKeyHex(k.PublicKey)
		if err != nil {
			return err
		}
		return in.sameKey(k.PublicKey, k.PublicKeyUncompressed, p)
	}
	checks["keygen/turnkey-js"] = func(key string) error {
		k, err := sample[keySample](samples, key)
		if err != nil {
			return err
		}
		scalar, err := hex.DecodeString(k.PrivateKey)
		if err != nil {
			return err
		}
		priv, err := walletcrypto.NewPrivateKey(scalar)
		if err != nil {
			return err
		}
		return in.sameKey(k.PublicKey, k.PublicKeyUncompressed, priv.PublicKey())
	}
	for _, key := range []string{"keygen/webcrypto", "keygen/webcrypto-worker"} {
		checks[key] = func(key string) error {
			s, err := sample[string](samples, key)
			if err != nil {
				return err
			}
			raw, err := hex.DecodeString(s)
			if err != nil {
				return err
			}
			_, err = walletcrypto.ParsePublicKey(raw)
			return err
		}
	}
	verified = append(verified, "keygen: every new public key is a P-256 point, given in matching compressed and uncompressed forms; Turnkey's belongs to its private key")

	for key := range checks {
		if _, ok := samples[key]; !ok {
			fail(key, errors.New("no sample from the page"))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(samples)) {
		check, ok := checks[key]
		if !ok {
			fail(key, errors.New("the page has an implementation that Go does not check"))
			continue
		}
		if err := check(key); err != nil {
			fail(key, err)
		}
	}
	return verified, errors.Join(errs...)
}

// keySample is a key as the page describes it.
type keySample struct {
	PrivateKey            string `json:"privateKey"`
	PublicKey             string `json:"publicKey"`
	PublicKeyUncompressed string `json:"publicKeyUncompressed"`
}

// sealSample is an HPKE seal as the page returns it.
type sealSample struct {
	EncappedPublic string `json:"encappedPublic"`
	Ciphertext     string `json:"ciphertext"`
}

// sample decodes samples[key] into T.
func sample[T any](samples map[string]any, key string) (T, error) {
	var v T
	b, err := json.Marshal(samples[key])
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return v, fmt.Errorf("unexpected sample %s: %w", b, err)
	}
	return v, nil
}

// verifyStamp checks a stamp header over payload under the session key.
func (in *inputs) verifyStamp(header string) error {
	st, err := walletcrypto.ParseStamp(header)
	if err != nil {
		return err
	}
	if !st.PublicKey.Equal(in.session.PublicKey()) {
		return errors.New("stamp carries another public key")
	}
	return st.Verify([]byte(payload))
}

// verifyP1363 checks a WebCrypto ECDSA signature (r || s, hex) over payload
// under the session key, through the same DER path as a stamp.
func (in *inputs) verifyP1363(sigHex string) error {
	raw, err := hex.DecodeString(sigHex)
	if err != nil || len(raw) != 64 {
		return fmt.Errorf("not a 64-byte r||s signature: %q", sigHex)
	}
	der, err := walletcrypto.EncodeDERSignature(new(big.Int).SetBytes(raw[:32]), new(big.Int).SetBytes(raw[32:]))
	if err != nil {
		return err
	}
	st := &walletcrypto.Stamp{PublicKey: in.session.PublicKey(), Scheme: walletcrypto.StampScheme, Signature: der}
	return st.Verify([]byte(payload))
}

// openSeal opens an hpke-seal sample with the recipient's key.
func (in *inputs) openSeal(samples map[string]any, key string) ([]byte, error) {
	s, err := sample[sealSample](samples, key)
	if err != nil {
		return nil, err
	}
	enc, err := hex.DecodeString(s.EncappedPublic)
	if err != nil {
		return nil, fmt.Errorf("encappedPublic: %w", err)
	}
	ct, err := hex.DecodeString(s.Ciphertext)
	if err != nil {
		return nil, fmt.Errorf("ciphertext: %w", err)
	}
	return walletcrypto.Open(in.recipient, enc, ct)
}

// sameKey checks that the compressed hex (and the uncompressed hex, unless
// empty) are canonical encodings of want.
func (in *inputs) sameKey(compressed, uncompressed string, want *walletcrypto.PublicKey) error {
	if compressed != want.CompressedHex() {
		return fmt.Errorf("public key %s, want %s", compressed, want.CompressedHex())
	}
	if uncompressed != "" && uncompressed != want.UncompressedHex() {
		return fmt.Errorf("uncompressed public key %s, want %s", uncompressed, want.UncompressedHex())
	}
	return nil
}

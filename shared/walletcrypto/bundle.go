package walletcrypto

import "encoding/hex"

// A Bundle is the JSON HPKE form used for the OTP bundle (and Turnkey's import and
// export bundles):
//
//	{"encappedPublic":"<130 lower-case hex>","ciphertext":"<lower-case hex>"}
//
// with the keys in that order and no whitespace.
type Bundle struct {
	EncappedPublic []byte // 65-byte uncompressed encapsulated key
	Ciphertext     []byte // AES-256-GCM output, tag included
}

// Encode returns the JSON form of b.
func (b Bundle) Encode() string {
	return string(appendFlat(nil, flatObject{
		{"encappedPublic", hex.EncodeToString(b.EncappedPublic)},
		{"ciphertext", hex.EncodeToString(b.Ciphertext)},
	}))
}

// ParseBundle parses the JSON HPKE form. It requires exactly the keys
// encappedPublic and ciphertext (in any order), an encappedPublic that is a valid
// uncompressed point (130 hex characters), and a ciphertext of at least 16 bytes.
// Hex may be upper or lower case. It does not decrypt.
func ParseBundle(s string) (Bundle, error) {
	o, err := parseFlat([]byte(s))
	if err != nil {
		return Bundle{}, err
	}
	if err := onlyKeys(o, "encappedPublic", "ciphertext"); err != nil {
		return Bundle{}, err
	}
	encHex, _ := o.get("encappedPublic")
	ctHex, _ := o.get("ciphertext")
	enc, err := parseUncompressedHex(encHex, "bundle: encappedPublic")
	if err != nil {
		return Bundle{}, err
	}
	ct, err := decodeHex(ctHex)
	if err != nil {
		return Bundle{}, malformed("bundle: ciphertext is not hex")
	}
	if len(ct) < 16 {
		return Bundle{}, malformed("bundle: ciphertext shorter than the AEAD tag")
	}
	return Bundle{EncappedPublic: enc.Uncompressed(), Ciphertext: ct}, nil
}

// SealBundleWith seals plaintext to recipient (see [SealWith]) and returns the
// JSON form.
func SealBundleWith(b KeySource, recipient *PublicKey, plaintext []byte) (string, error) {
	enc, ct, err := SealWith(b, recipient, plaintext)
	if err != nil {
		return "", err
	}
	return Bundle{EncappedPublic: enc, Ciphertext: ct}.Encode(), nil
}

// OpenBundle parses the JSON form and opens it with recipient (see [Open]).
func OpenBundle(recipient ECDHKey, s string) ([]byte, error) {
	b, err := ParseBundle(s)
	if err != nil {
		return nil, err
	}
	return Open(recipient, b.EncappedPublic, b.Ciphertext)
}

// onlyKeys checks that o has every one of keys and nothing else.
func onlyKeys(o flatObject, keys ...string) error {
	if err := unknownKey(o, keys...); err != nil {
		return err
	}
	return missingKey(o, keys...)
}

func unknownKey(o flatObject, keys ...string) error {
	for _, f := range o {
		known := false
		for _, k := range keys {
			known = known || f.key == k
		}
		if !known {
			return malformed("json: unknown key " + quote(f.key))
		}
	}
	return nil
}

func missingKey(o flatObject, keys ...string) error {
	for _, k := range keys {
		if _, ok := o.get(k); !ok {
			return malformed("json: missing key " + quote(k))
		}
	}
	return nil
}

// quote returns s as a JSON string, cut short, for error messages.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return string(appendString(nil, s))
}

package bip39

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// publishedListSHA256 is the SHA-256 of english.txt as published with BIP-39
// (bitcoin/bips, bip-0039/english.txt).
const publishedListSHA256 = "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"

func TestWordListIsThePublishedOne(t *testing.T) {
	b, err := os.ReadFile("english.txt")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != publishedListSHA256 {
		t.Fatalf("english.txt has SHA-256 %x, want %s", sum, publishedListSHA256)
	}
	if string(b) != english {
		t.Fatal("the embedded list differs from english.txt")
	}
	// Properties BIP-39 states for the list: 3 to 8 lower-case letters, and
	// the first four letters identify a word.
	prefixes := make(map[string]bool, len(words))
	for i, w := range words {
		if len(w) < 3 || len(w) > 8 || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Errorf("word %d %q", i, w)
		}
		p := w[:min(4, len(w))]
		if prefixes[p] {
			t.Errorf("prefix %q is not unique", p)
		}
		prefixes[p] = true
	}
	if words[0] != "abandon" || words[2047] != "zoo" {
		t.Fatalf("first and last words %q, %q", words[0], words[2047])
	}
}

type vector struct {
	Entropy  string `json:"entropy"`
	Mnemonic string `json:"mnemonic"`
}

// loadVectors reads testdata/vectors.json: the official (Trezor) vectors and
// the 160- and 224-bit cases made with the bip39 npm package.
func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Source  string   `json:"_source"`
		Trezor  []vector `json:"trezor"`
		BIP39JS []vector `json:"bip39js"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("testdata/vectors.json: %v", err)
	}
	if len(v.Trezor) != 24 || len(v.BIP39JS) == 0 {
		t.Fatalf("vectors.json has %d official and %d extra vectors", len(v.Trezor), len(v.BIP39JS))
	}
	return append(v.Trezor, v.BIP39JS...)
}

func TestKnownAnswers(t *testing.T) {
	sizes := make(map[int]bool)
	for _, v := range loadVectors(t) {
		entropy, err := hex.DecodeString(v.Entropy)
		if err != nil {
			t.Fatal(err)
		}
		sizes[len(entropy)] = true
		got, err := FromEntropy(entropy)
		if err != nil || got != v.Mnemonic {
			t.Errorf("FromEntropy(%s) = %q, %v\nwant %q", v.Entropy, got, err, v.Mnemonic)
		}
		back, err := Entropy(v.Mnemonic)
		if err != nil || !bytes.Equal(back, entropy) {
			t.Errorf("Entropy(%q) = %x, %v; want %s", v.Mnemonic, back, err, v.Entropy)
		}
		if !Valid(v.Mnemonic) {
			t.Errorf("Valid(%q) = false", v.Mnemonic)
		}
	}
	for _, n := range []int{16, 20, 24, 28, 32} {
		if !sizes[n] {
			t.Errorf("no vector with %d bytes of entropy", n)
		}
	}
}

func TestFromEntropyLength(t *testing.T) {
	for n := range 40 {
		m, err := FromEntropy(make([]byte, n))
		ok := n == 16 || n == 20 || n == 24 || n == 28 || n == 32
		switch {
		case ok && (err != nil || strings.Count(m, " ")+1 != n*3/4):
			t.Errorf("%d bytes: %q, %v", n, m, err)
		case !ok && (err != ErrEntropyLength || m != ""):
			t.Errorf("%d bytes: %q, %v; want ErrEntropyLength", n, m, err)
		}
	}
}

func TestNewMnemonic(t *testing.T) {
	seen := make(map[string]bool)
	for range 8 {
		m, err := NewMnemonic()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Split(m, " ")); n != 24 {
			t.Fatalf("%d words", n)
		}
		if !Valid(m) {
			t.Fatalf("NewMnemonic made an invalid mnemonic")
		}
		if seen[m] {
			t.Fatal("NewMnemonic repeated itself")
		}
		seen[m] = true
	}
}

func TestInvalid(t *testing.T) {
	const (
		zero12 = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
		legal  = "legal winner thank year wave sausage worth useful legal winner thank yellow"
		zero24 = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art"
	)
	tests := []struct {
		name, mnemonic string
		want           error
	}{
		{"empty", "", ErrWordCount},
		{"one word", "abandon", ErrWordCount},
		{"11 words", strings.TrimSuffix(zero12, " about"), ErrWordCount},
		{"13 words", zero12 + " about", ErrWordCount},
		{"14 words", zero12 + " abandon about", ErrWordCount},
		{"25 words", zero24 + " art", ErrWordCount},
		{"27 words", zero24 + " abandon abandon art", ErrWordCount},
		{"leading space", " " + legal[:len(legal)-7], ErrSpacing},
		{"trailing space", legal[:len(legal)-7] + " ", ErrSpacing},
		{"double space", strings.Replace(legal, " ", "  ", 1)[:len(legal)-6], ErrSpacing},
		{"tab", strings.Replace(legal, " ", "\t", 1) + " yellow", ErrUnknownWord},
		{"newline at the end", legal + "\n", ErrUnknownWord},
		{"upper case", strings.ToUpper(legal), ErrUnknownWord},
		{"capitalised first word", "L" + legal[1:], ErrUnknownWord},
		{"not a word", strings.Replace(legal, "winner", "winnerr", 1), ErrUnknownWord},
		{"four-letter prefix only", strings.Replace(legal, "winner", "winn", 1), ErrUnknownWord},
		{"non-ASCII", strings.Replace(legal, "legal", "légal", 1), ErrUnknownWord},
		{"wrong checksum word (12)", strings.TrimSuffix(zero12, "about") + "abandon", ErrChecksum},
		{"wrong checksum word (24)", strings.TrimSuffix(zero24, "art") + "zoo", ErrChecksum},
		{"swapped words", "legal thank winner year wave sausage worth useful legal winner thank yellow", ErrChecksum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Entropy(tt.mnemonic)
			if !errors.Is(err, tt.want) || e != nil {
				t.Fatalf("Entropy = %x, %v; want %v", e, err, tt.want)
			}
			if Valid(tt.mnemonic) {
				t.Fatal("Valid = true")
			}
			if strings.Contains(err.Error(), "winn") || strings.Contains(err.Error(), "abandon") {
				t.Fatalf("error %q quotes the mnemonic", err)
			}
		})
	}
}

// TestChecksumEveryBit flips each bit of the encoded index stream of a
// 24-word mnemonic and checks that the result no longer validates: a change
// in the entropy bits changes the checksum, and a change in the checksum bits
// no longer matches.
func TestChecksumEveryBit(t *testing.T) {
	entropy := bytes.Repeat([]byte{0x5a}, 32)
	m, err := FromEntropy(entropy)
	if err != nil {
		t.Fatal(err)
	}
	ws := strings.Split(m, " ")
	stillValid := 0
	for i := range ws {
		idx, _ := index(ws[i])
		for bit := range 11 {
			changed := append([]string(nil), ws...)
			changed[i] = words[idx^1<<bit]
			if s := strings.Join(changed, " "); Valid(s) {
				// A flip in the entropy can keep the 8 checksum bits by
				// chance (1 in 256); a flip in the last word's low 8 bits
				// (the checksum itself) never can.
				if i == len(ws)-1 && bit < 8 {
					t.Fatalf("word %d bit %d: checksum flip still valid", i, bit)
				}
				stillValid++
			}
		}
	}
	if stillValid > 8 { // about 1 expected of 256 flips
		t.Fatalf("%d of 256 entropy bit flips keep the checksum", stillValid)
	}
}

func index(w string) (int, bool) {
	for i, x := range words {
		if x == w {
			return i, true
		}
	}
	return 0, false
}

func TestErrorMessages(t *testing.T) {
	for _, err := range []error{ErrEntropyLength, ErrWordCount, ErrSpacing, ErrUnknownWord, ErrChecksum, ErrRandom} {
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "bip39: ") {
			t.Errorf("%v", err)
		}
	}
}

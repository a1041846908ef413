// Package bip39 turns entropy into a BIP-39 mnemonic and back, with the
// English word list. The service gives every embedded-wallet account a
// 24-word mnemonic when the account is created ([NewMnemonic]) and hands it,
// sealed, to the account holder on export; nothing else here is needed for
// that, so the package has no seed derivation (PBKDF2) and no other
// languages.
//
// # Format
//
// A mnemonic encodes ENT bits of entropy (ENT = 128, 160, 192, 224 or 256)
// followed by a checksum of ENT/32 bits, the first bits of SHA-256 of the
// entropy, in groups of 11 bits read most significant first; each group
// indexes the 2048-word list (english.txt, byte for byte the list published
// with BIP-39). That gives 12, 15, 18, 21 or 24 words.
//
// # Strictness
//
// [Valid] and [Entropy] accept only the form [FromEntropy] writes: lower-case
// words of the list separated by single ASCII spaces, with nothing before
// the first word or after the last. A mnemonic that parses therefore
// re-encodes to the same string. Error messages never quote the mnemonic or
// any of its words, so they are safe to log.
package bip39

import (
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"slices"
	"strings"
)

// english is the BIP-39 English word list, one word per line.
//
//go:embed english.txt
var english string

// words is the list in index order; it is sorted, so lookups binary-search it.
var words = loadWords(english)

func loadWords(list string) []string {
	w := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(w) != 2048 || !slices.IsSorted(w) {
		panic("bip39: english.txt is not the 2048-word sorted list")
	}
	return w
}

// Error is the error type of this package. Every error it returns is one of
// the Err values below; compare with == or [errors.Is].
type Error struct{ msg string }

func (e *Error) Error() string { return "bip39: " + e.msg }

var (
	// ErrEntropyLength reports entropy that is not 16, 20, 24, 28 or 32 bytes.
	ErrEntropyLength = &Error{"entropy must be 16, 20, 24, 28 or 32 bytes"}
	// ErrWordCount reports a mnemonic that does not have 12, 15, 18, 21 or 24 words.
	ErrWordCount = &Error{"a mnemonic has 12, 15, 18, 21 or 24 words"}
	// ErrSpacing reports an empty word: a leading, trailing or doubled space.
	ErrSpacing = &Error{"words must be separated by single spaces"}
	// ErrUnknownWord reports a word that is not in the English list.
	ErrUnknownWord = &Error{"a word is not in the English list"}
	// ErrChecksum reports a mnemonic whose checksum bits do not match its entropy.
	ErrChecksum = &Error{"checksum mismatch"}
	// ErrRandom reports that the system's random source failed.
	ErrRandom = &Error{"no randomness"}
)

// NewMnemonic returns a new 24-word mnemonic encoding 256 bits from
// crypto/rand.
func NewMnemonic() (string, error) {
	entropy := make([]byte, 32)
	defer clear(entropy)
	if _, err := rand.Read(entropy); err != nil {
		return "", ErrRandom
	}
	return FromEntropy(entropy)
}

// FromEntropy returns the mnemonic of entropy, which must be 16, 20, 24, 28
// or 32 bytes (12 to 24 words).
func FromEntropy(entropy []byte) (string, error) {
	n := len(entropy)
	if n < 16 || n > 32 || n%4 != 0 {
		return "", ErrEntropyLength
	}
	sum := sha256.Sum256(entropy)
	count := n * 3 / 4 // (8n + n/4) bits / 11 bits per word
	var b strings.Builder
	b.Grow(count * 9)
	// Feed entropy, then the first hash byte (of which only n/4 bits are
	// read), into a bit accumulator and take 11 bits at a time.
	var acc uint32
	bits := 0
	for i := 0; i <= n; i++ {
		next := sum[0]
		if i < n {
			next = entropy[i]
		}
		acc = acc<<8 | uint32(next)
		bits += 8
		for bits >= 11 && count > 0 {
			bits -= 11
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[acc>>bits&0x7ff])
			count--
		}
	}
	return b.String(), nil
}

// Entropy returns the entropy encoded by mnemonic, checking the form, the
// words and the checksum (see the package documentation).
func Entropy(mnemonic string) ([]byte, error) {
	count := strings.Count(mnemonic, " ") + 1
	if count < 12 || count > 24 || count%3 != 0 {
		return nil, ErrWordCount
	}
	n := count * 4 / 3 // entropy bytes
	out := make([]byte, 0, n)
	var acc uint32
	bits := 0
	for w := range strings.SplitSeq(mnemonic, " ") {
		if w == "" {
			clear(out)
			return nil, ErrSpacing
		}
		i, found := slices.BinarySearch(words, w)
		if !found {
			clear(out)
			return nil, ErrUnknownWord
		}
		acc = acc<<11 | uint32(i)
		bits += 11
		for bits >= 8 && len(out) < n {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	// What is left is the checksum: n/4 bits.
	sum := sha256.Sum256(out)
	if acc&(1<<bits-1) != uint32(sum[0]>>(8-bits)) {
		clear(out)
		return nil, ErrChecksum
	}
	return out, nil
}

// Valid reports whether mnemonic is a well-formed English mnemonic with a
// correct checksum, exactly as [FromEntropy] writes it.
func Valid(mnemonic string) bool {
	e, err := Entropy(mnemonic)
	clear(e)
	return err == nil
}

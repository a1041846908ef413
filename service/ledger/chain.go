package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
)

// The canonical form of a ledger transaction, hashed by BodyHash, is the
// concatenation of netstrings (the decimal length of the bytes, a colon,
// the bytes, a line feed) of, in this order:
//
//	"paywallet ledger transaction v1"
//	ID, Kind, TransactionID, QuoteID, PendingID, Description
//	CreatedAt as decimal microseconds since the Unix epoch
//	the number of entries, in decimal
//	per entry, in order: Account, Currency, Amount, AvailableAfter, HeldAfter (integers in decimal, "-" for a negative)
//
// Empty fields are empty netstrings ("0:\n"). The form has no ambiguity
// (every field carries its length) and needs nothing but SHA-256 and
// decimal printing to reproduce in another language.
//
// The chain links the sealed transactions one after the other:
//
//	link(n) = SHA-256("paywallet ledger chain v1\n" ‖ link(n-1) ‖ n as 8 bytes big-endian ‖ BodyHash(transaction n))
//
// with link(0) = 32 zero bytes and n counting from 1.

// HashSize is the size of a body hash and of a link.
const HashSize = sha256.Size

// Hash is a body hash or a link.
type Hash [HashSize]byte

// String is the hash in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hash in hex.
func ParseHash(s string) (Hash, bool) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != HashSize {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// BodyHash is the SHA-256 of t's canonical form.
func BodyHash(t *Transaction) Hash {
	return sha256.Sum256(AppendCanonical(make([]byte, 0, 256+len(t.Entries)*96), t))
}

// AppendCanonical appends t's canonical form (see above) to b: a caller
// hashing many transactions (the verifier) reuses one buffer.
func AppendCanonical(b []byte, t *Transaction) []byte {
	b = AppendNetstring(b, "paywallet ledger transaction v1")
	b = AppendNetstring(b, t.ID)
	b = AppendNetstring(b, string(t.Kind))
	b = AppendNetstring(b, t.TransactionID)
	b = AppendNetstring(b, t.QuoteID)
	b = AppendNetstring(b, t.PendingID)
	b = AppendNetstring(b, t.Description)
	b = netint(b, t.CreatedAt.UnixMicro())
	b = netint(b, int64(len(t.Entries)))
	for i := range t.Entries {
		e := &t.Entries[i]
		b = AppendNetstring(b, string(e.Account))
		b = AppendNetstring(b, e.Currency)
		b = netint(b, e.Amount)
		b = netint(b, e.AvailableAfter)
		b = netint(b, e.HeldAfter)
	}
	return b
}

// AppendNetstring appends the netstring of s (its decimal length, a colon,
// the bytes, a line feed): the field encoding of the canonical form, which
// the customers' security log (service/seclog) shares.
func AppendNetstring(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, '\n')
}

// netint is the netstring of v in decimal, without a string in between.
func netint(b []byte, v int64) []byte {
	var num [20]byte
	d := strconv.AppendInt(num[:0], v, 10)
	b = strconv.AppendInt(b, int64(len(d)), 10)
	b = append(b, ':')
	b = append(b, d...)
	return append(b, '\n')
}

const linkDomain = "paywallet ledger chain v1\n"

// Link is the chain's link n after prev for a transaction of body hash
// body.
func Link(prev Hash, n int64, body Hash) Hash { return ChainLink(linkDomain, prev, n, body) }

// maxDomain bounds a chain's domain label (ChainLink's buffer stays on the
// stack: the verifier links every sealed transaction).
const maxDomain = 64

// ChainLink is SHA-256(domain ‖ prev ‖ n as 8 bytes big-endian ‖ body):
// the ledger's link under its domain, and the security log's under its own.
func ChainLink(domain string, prev Hash, n int64, body Hash) Hash {
	if len(domain) > maxDomain {
		panic("ledger: a chain's domain label is at most 64 bytes")
	}
	var b [maxDomain + 2*HashSize + 8]byte
	i := copy(b[:], domain)
	i += copy(b[i:], prev[:])
	binary.BigEndian.PutUint64(b[i:], uint64(n))
	i += 8
	i += copy(b[i:], body[:])
	return sha256.Sum256(b[:i])
}

// Head is the chain's last link: how many transactions are sealed, the
// last link, and when it was sealed. The zero Head is the empty chain.
type Head struct {
	Seq  int64
	Hash Hash
	At   time.Time
}

// Package seclog is the construction of a customer's security log: the
// hash that chains each record of security_events to the one before, so
// that a record changed, removed from the middle or moved is caught by
// anyone who recomputes the chain (`paymentsd ledger verify`, or a script
// in another language). It is the ledger's construction (service/ledger,
// chain.go) under labels of its own, one chain per customer.
//
// The canonical form of a record, hashed by BodyHash, is the concatenation
// of netstrings (the decimal length of the bytes, a colon, the bytes, a
// line feed) of, in this order:
//
//	"paywallet security event v1"
//	ID, CustomerID, AccountID (empty when none), Type
//	Details: the JSON object as stored (canonical: keys sorted, no spaces)
//	CreatedAt as decimal microseconds since the Unix epoch
//
// Empty fields are empty netstrings ("0:\n"). The chain of a customer
// links the records in the order of their seq:
//
//	link(n) = SHA-256("paywallet security chain v1\n" ‖ link(n-1) ‖ n as 8 bytes big-endian ‖ BodyHash(record n))
//
// with link(0) = 32 zero bytes and n = seq counting from 1. A record keeps
// link(n-1) as prev_hash and link(n) as hash, both in lower-case hex.
package seclog

import (
	"crypto/sha256"
	"strconv"
	"time"

	"paywallet/service/ledger"
)

// Hash is a body hash or a link (the ledger's; String is lower-case hex,
// as it is stored and answered).
type Hash = ledger.Hash

// Record is what the chain covers of one row of security_events.
type Record struct {
	ID, CustomerID, AccountID, Type string
	Details                         []byte
	CreatedAt                       time.Time
}

// BodyHash is the SHA-256 of r's canonical form (see the package comment).
func BodyHash(r *Record) Hash {
	b := make([]byte, 0, 256+len(r.Details))
	b = ledger.AppendNetstring(b, "paywallet security event v1")
	b = ledger.AppendNetstring(b, r.ID)
	b = ledger.AppendNetstring(b, r.CustomerID)
	b = ledger.AppendNetstring(b, r.AccountID)
	b = ledger.AppendNetstring(b, r.Type)
	b = ledger.AppendNetstring(b, string(r.Details))
	b = ledger.AppendNetstring(b, strconv.FormatInt(r.CreatedAt.UnixMicro(), 10))
	return sha256.Sum256(b)
}

const linkDomain = "paywallet security chain v1\n"

// Link is link n of a customer's chain after prev, for a record of body
// hash body.
func Link(prev Hash, n int64, body Hash) Hash { return ledger.ChainLink(linkDomain, prev, n, body) }

// Next is the hash of record r appended at seq n after the link prev (in
// hex; "" is link(0), the start of a chain): what the store writes in the
// hash column.
func Next(prev string, n int64, r *Record) (string, bool) {
	var p Hash
	if prev != "" {
		var ok bool
		if p, ok = ledger.ParseHash(prev); !ok {
			return "", false
		}
	}
	return Link(p, n, BodyHash(r)).String(), true
}

// Zero is link(0) in hex: the prev_hash of a customer's first record.
var Zero = Hash{}.String()

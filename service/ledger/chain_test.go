package ledger

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// TestCanonicalVector checks the canonical form, the body hash and a link
// against testdata/canonical_v1.json, made from chain.go's description by
// another implementation: the bytes a verifier in another language must
// reproduce.
func TestCanonicalVector(t *testing.T) {
	raw, err := os.ReadFile("testdata/canonical_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Transaction struct {
			ID, Kind, TransactionID, QuoteID, PendingID, Description string
			CreatedAtMicros                                          int64
			Entries                                                  []struct {
				Account, Currency                 string
				Amount, AvailableAfter, HeldAfter int64
			}
		}
		Canonical, BodyHash, PreviousLink, Link string
		Seq                                     int64
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	x := v.Transaction
	lt := &Transaction{ID: x.ID, Kind: Kind(x.Kind), TransactionID: x.TransactionID, QuoteID: x.QuoteID, PendingID: x.PendingID,
		Description: x.Description, CreatedAt: time.UnixMicro(x.CreatedAtMicros)}
	for _, e := range x.Entries {
		lt.Entries = append(lt.Entries, Entry{Account: Account(e.Account), Currency: e.Currency, Amount: e.Amount,
			AvailableAfter: e.AvailableAfter, HeldAfter: e.HeldAfter})
	}
	if err := lt.Check(); err != nil {
		t.Fatal(err)
	}
	if got := string(AppendCanonical([]byte("prefix"), lt)); got != "prefix"+v.Canonical {
		t.Fatalf("canonical form\n%q\nwant\n%q", got, v.Canonical)
	}
	body := BodyHash(lt)
	if body.String() != v.BodyHash || Hash(sha256.Sum256([]byte(v.Canonical))) != body {
		t.Fatalf("body hash %s, want %s", body, v.BodyHash)
	}
	prev, ok := ParseHash(v.PreviousLink)
	if !ok {
		t.Fatal("previous link")
	}
	if got := Link(prev, v.Seq, body); got.String() != v.Link {
		t.Fatalf("link %s, want %s", got, v.Link)
	}
}

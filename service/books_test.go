package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// TestReadingTheBooks walks a payment through the books as the API reads
// them: a wallet funded, a quote executed and settled; the statement
// (kinds, amounts, balances after, newest first, pages, time bounds), the
// accounts (zero per currency, the wallet's sides its balances), one ledger
// transaction, and the signed head before and after the sealer runs.
func TestReadingTheBooks(t *testing.T) {
	onBothStores(t, testReadingTheBooks)
}

// entryLine is what a statement test compares of an entry.
type entryLine struct {
	kind, side        string
	amount            int64
	available, held   int64
	transactionID     string
	ledgerTransaction string
}

func lines(list wire.List[wire.LedgerEntry]) []entryLine {
	var out []entryLine
	for _, e := range list.Data {
		out = append(out, entryLine{e.Kind, e.Side, e.Amount, e.AvailableAfter, e.HeldAfter, e.TransactionID, e.LedgerTransactionID})
	}
	return out
}

func (e *env) statement(accountID, query string) wire.List[wire.LedgerEntry] {
	e.t.Helper()
	r := e.do("GET", "/internal-accounts/"+accountID+"/entries"+query, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list wire.List[wire.LedgerEntry]
	r.decode(e.t, &list)
	return list
}

func (e *env) ledgerTransaction(id string) payments.LedgerTransaction {
	e.t.Helper()
	r := e.do("GET", "/ledger/transactions/"+id, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var lt payments.LedgerTransaction
	r.decode(e.t, &lt)
	return lt
}

func (e *env) seal() {
	e.t.Helper()
	if _, err := e.svc.SealLedger(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
}

func testReadingTheBooks(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	t0 := e.clock.Now()
	p := e.newPayer("books@example.com", 50_000)
	funding := e.statement(p.account.ID, "")
	if len(funding.Data) != 1 {
		t.Fatalf("statement after funding: %+v", funding)
	}
	fundingTx := funding.Data[0].TransactionID

	e.clock.Advance(time.Hour)
	t1 := e.clock.Now()
	dest := e.destination(p, "12345")
	q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
	e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK) // the session ended in the hour
	e.clock.Advance(time.Minute)
	t2 := e.clock.Now()
	if n := e.settle(); n != 1 {
		t.Fatalf("settled %d", n)
	}

	// The statement, newest first: the POST, the HOLD's two sides, the
	// funding.
	all := e.statement(p.account.ID, "")
	got := lines(all)
	if len(got) != 4 {
		t.Fatalf("statement %+v", all)
	}
	post, hold := got[0].ledgerTransaction, got[1].ledgerTransaction
	want := []entryLine{
		{"POST", "HELD", -10_000, 40_000, 0, q.TransactionID, post},
		{"HOLD", "HELD", 10_000, 40_000, 10_000, q.TransactionID, hold},
		{"HOLD", "AVAILABLE", -10_000, 40_000, 10_000, q.TransactionID, hold},
		{"FUNDING", "AVAILABLE", 50_000, 50_000, 0, fundingTx, funding.Data[0].LedgerTransactionID},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("statement\n got %+v\nwant %+v", got, want)
	}
	if all.HasMore || all.NextCursor != "" || all.TotalCount == nil || *all.TotalCount != 4 {
		t.Fatalf("paging of the whole statement: %+v", all)
	}
	for _, x := range all.Data {
		wantAccount := string(ledger.WalletAccount(p.account.ID, ledger.Side(strings.ToLower(x.Side))))
		switch {
		case x.Account != wantAccount, x.Currency != "USD", x.Description == "":
			t.Errorf("entry %+v", x)
		case x.Kind != "FUNDING" && x.QuoteID != q.ID:
			t.Errorf("entry %+v does not name its quote", x)
		case x.CreatedAt != timestamp(map[string]time.Time{"FUNDING": t0, "HOLD": t1, "POST": t2}[x.Kind]):
			t.Errorf("entry %s at %s", x.Kind, x.CreatedAt)
		}
	}

	// Pages of two, forward with the cursor; oldest first on request.
	first := e.statement(p.account.ID, "?limit=2")
	if !first.HasMore || first.NextCursor != all.Data[1].ID || *first.TotalCount != 4 || !slices.Equal(lines(first), want[:2]) {
		t.Fatalf("first page %+v", first)
	}
	second := e.statement(p.account.ID, "?limit=2&cursor="+url.QueryEscape(first.NextCursor))
	if second.HasMore || second.NextCursor != "" || !slices.Equal(lines(second), want[2:]) {
		t.Fatalf("second page %+v", second)
	}
	asc := lines(e.statement(p.account.ID, "?sortOrder=asc"))
	slices.Reverse(asc)
	if !slices.Equal(asc, want) {
		t.Fatalf("oldest first, reversed: %+v", asc)
	}

	// Time bounds: after inclusive, before exclusive.
	for _, c := range []struct {
		query string
		want  []entryLine
		total int
	}{
		{"?createdAfter=" + t1.Format(time.RFC3339), want[:3], 3},
		{"?createdBefore=" + t1.Format(time.RFC3339), want[3:], 1},
		{"?createdAfter=" + t1.Format(time.RFC3339) + "&createdBefore=" + t2.Format(time.RFC3339), want[1:3], 2},
		{"?createdAfter=" + url.QueryEscape(t2.Add(time.Second).Format(time.RFC3339)), nil, 0},
		{"?createdAfter=" + url.QueryEscape(t0.In(time.FixedZone("", -5*3600)).Format(time.RFC3339)) + "&limit=1", want[:1], 4},
	} {
		page := e.statement(p.account.ID, c.query)
		if !slices.Equal(lines(page), c.want) || *page.TotalCount != c.total {
			t.Errorf("%s: %+v", c.query, page)
		}
	}

	// Bad queries name every bad field; unknown and malformed accounts
	// are 404.
	r := e.do("GET", "/internal-accounts/"+p.account.ID+"/entries?limit=0&cursor=Transaction:x&createdAfter=yesterday&createdBefore=2026-13-01T00:00:00Z&sortOrder=up", nil, nil)
	if got, want := fieldsOf(t, r), []string{"createdAfter", "createdBefore", "cursor", "limit", "sortOrder"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	for _, id := range []string{"InternalAccount:00000000-0000-7000-8000-000000000000", "nope", dest.ID} {
		wantCode(t, e.do("GET", "/internal-accounts/"+id+"/entries", nil, nil), http.StatusNotFound, "NOT_FOUND")
	}
	// A deleted customer's CLOSED account keeps its statement.
	gone := e.newWallet("books-gone@example.com")
	e.mustStatus(e.do("DELETE", "/customers/"+gone.customer.ID, nil, nil), http.StatusOK)
	if s := e.statement(gone.account.ID, ""); len(s.Data) != 0 || *s.TotalCount != 0 {
		t.Fatalf("statement of a closed account %+v", s)
	}

	// The accounts: zero per currency, summed here and in totals; the
	// wallet's sides are its balances.
	var accts payments.LedgerAccounts
	r = e.do("GET", "/ledger/accounts", nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &accts)
	sums := map[string]int64{}
	byID := map[string]payments.LedgerAccount{}
	for _, a := range accts.Data {
		sums[a.Currency] += a.Balance
		byID[a.ID] = a
	}
	for cur, sum := range sums {
		if sum != 0 {
			t.Errorf("%s sums to %d", cur, sum)
		}
	}
	if len(accts.Totals) != 1 || accts.Totals[0] != (payments.LedgerTotal{Currency: "USD", Balance: 0, Accounts: len(accts.Data),
		Entries: accts.Totals[0].Entries}) || accts.Totals[0].Entries < 7 {
		t.Fatalf("totals %+v of %+v", accts.Totals, accts.Data)
	}
	bal := e.account(p.account.ID)
	avail := byID[string(ledger.WalletAccount(p.account.ID, ledger.Available))]
	held := byID[string(ledger.WalletAccount(p.account.ID, ledger.Held))]
	if avail.Balance != bal.Balance.Amount || held.Balance != bal.TotalBalance.Amount-bal.Balance.Amount ||
		avail.Type != "WALLET_AVAILABLE" || held.Type != "WALLET_HELD" || avail.InternalAccountID != p.account.ID ||
		held.InternalAccountID != p.account.ID || avail.Entries != 2 || held.Entries != 2 || avail.Name != "Wallet, available" {
		t.Fatalf("wallet sides %+v %+v, account %+v", avail, held, bal)
	}
	x := e.transaction(q.TransactionID)
	for id, wantAcct := range map[ledger.Account]payments.LedgerAccount{
		ledger.Sandbox("USD"):         {Type: "SANDBOX_FUNDING", Balance: -50_000, Entries: 1},
		ledger.Fees("USD"):            {Type: "FEES", Balance: q.FeesIncluded, Entries: 1},
		ledger.Clearing("ACH", "USD"): {Type: "CLEARING", Balance: x.ReceivedAmount.Amount, Entries: 1},
	} {
		a := byID[string(id)]
		if a.Type != wantAcct.Type || a.Balance != wantAcct.Balance || a.Entries != wantAcct.Entries || a.Name != id.Name() ||
			a.InternalAccountID != "" || a.Currency != "USD" {
			t.Errorf("%s: %+v, want %+v", id, a, wantAcct)
		}
	}

	// One ledger transaction: the POST resolves the HOLD.
	lt := e.ledgerTransaction(post)
	if lt.Kind != "POST" || lt.TransactionID != q.TransactionID || lt.QuoteID != q.ID || lt.PendingID != hold ||
		lt.Sealed || lt.Sequence != 0 || lt.Link != "" || len(lt.BodyHash) != 64 || lt.CreatedAt != timestamp(t2) {
		t.Fatalf("POST %+v", lt)
	}
	var sum int64
	walletEntries := 0
	for _, en := range lt.Entries {
		sum += en.Amount
		if en.InternalAccountID != "" {
			walletEntries++
			if en.InternalAccountID != p.account.ID || en.Type != "WALLET_HELD" || en.Amount != -10_000 ||
				en.AvailableAfter == nil || *en.AvailableAfter != 40_000 || en.HeldAfter == nil || *en.HeldAfter != 0 {
				t.Errorf("wallet entry %+v", en)
			}
		} else if en.AvailableAfter != nil || en.HeldAfter != nil || en.Name == "" || en.Type == "" {
			t.Errorf("system entry %+v", en)
		}
	}
	if sum != 0 || walletEntries != 1 {
		t.Fatalf("POST entries %+v", lt.Entries)
	}
	for _, id := range []string{"LedgerTransaction:00000000-0000-7000-8000-000000000000", "nope", q.TransactionID} {
		wantCode(t, e.do("GET", "/ledger/transactions/"+id, nil, nil), http.StatusNotFound, "NOT_FOUND")
	}

	// The head: empty and signed before the sealer runs, then the link of
	// the last transaction it chained; the chain recomputes from the
	// transactions' body hashes alone.
	head := e.verifiedHead()
	if head.Sequence != 0 || head.Hash != strings.Repeat("0", 64) || head.At != "" {
		t.Fatalf("head before sealing %+v", head)
	}
	e.clock.Advance(time.Second)
	sealedAt := e.clock.Now()
	e.seal()
	head = e.verifiedHead()
	var link ledger.Hash
	for i, id := range []string{funding.Data[0].LedgerTransactionID, hold, post} {
		lt := e.ledgerTransaction(id)
		body, ok := ledger.ParseHash(lt.BodyHash)
		if !ok || !lt.Sealed || lt.Sequence != int64(i+1) {
			t.Fatalf("%s after sealing: %+v", id, lt)
		}
		link = ledger.Link(link, lt.Sequence, body)
		if lt.Link != link.String() {
			t.Fatalf("%s: link %s, recomputed %s", id, lt.Link, link)
		}
	}
	if head.Sequence != 3 || head.Hash != link.String() || head.At != timestamp(sealedAt) {
		t.Fatalf("head after sealing %+v, want 3 %s at %s", head, link, timestamp(sealedAt))
	}

	// A new move leaves the head where it was until the sealer runs again.
	e.fund(p.account.ID, 1_000)
	if again := e.verifiedHead(); again.Sequence != 3 || again.Hash != head.Hash {
		t.Fatalf("head moved before sealing: %+v", again)
	}
	e.seal()
	if moved := e.verifiedHead(); moved.Sequence != 4 || moved.Hash == head.Hash {
		t.Fatalf("head after the next seal %+v", moved)
	}
	if s := e.statement(p.account.ID, "?limit=1"); s.Data[0].Kind != "FUNDING" || s.Data[0].AvailableAfter != 41_000 {
		t.Fatalf("newest entry %+v", s.Data[0])
	}
}

// verifiedHead reads GET /ledger/head and checks its signature with
// nothing but the JWKS the service serves without credentials and the JWS
// recipe (RFC 7515, ES256: R ‖ S over SHA-256 of "header.payload").
func (e *env) verifiedHead() wire.LedgerHead {
	e.t.Helper()
	t := e.t
	r := e.do("GET", "/ledger/head", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var head wire.LedgerHead
	r.decode(t, &head)
	r = e.do("GET", "/webhooks/jwks.json", nil, map[string]string{"Authorization": ""})
	e.mustStatus(r, http.StatusOK)
	var jwks struct {
		Keys []struct{ Kty, Crv, X, Y, Kid, Alg string } `json:"keys"`
	}
	r.decode(t, &jwks)

	parts := strings.Split(head.Signature, ".")
	if len(parts) != 3 {
		t.Fatalf("signature %q is not a compact JWS", head.Signature)
	}
	dec := base64.RawURLEncoding
	rawHeader, err1 := dec.DecodeString(parts[0])
	payload, err2 := dec.DecodeString(parts[1])
	sig, err3 := dec.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) != 64 {
		t.Fatalf("JWS parts: %v %v %v, signature of %d bytes", err1, err2, err3, len(sig))
	}
	var hdr struct{ Alg, Kid, Typ string }
	if err := json.Unmarshal(rawHeader, &hdr); err != nil || hdr.Alg != "ES256" || hdr.Typ != "paywallet-ledger-head" {
		t.Fatalf("JWS header %s: %v", rawHeader, err)
	}
	var pub *ecdsa.PublicKey
	for _, k := range jwks.Keys {
		if k.Kid != hdr.Kid || k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" {
			continue
		}
		x, _ := dec.DecodeString(k.X)
		y, _ := dec.DecodeString(k.Y)
		p, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			t.Fatal(err)
		}
		pub = p
	}
	if pub == nil {
		t.Fatalf("kid %s is not in the served JWKS", hdr.Kid)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the head's signature does not verify with the served key")
	}
	var signed map[string]any
	if err := json.Unmarshal(payload, &signed); err != nil {
		t.Fatal(err)
	}
	wantSigned := map[string]any{"sequence": float64(head.Sequence), "hash": head.Hash}
	if head.At != "" {
		wantSigned["at"] = head.At
	}
	if len(signed) != len(wantSigned) || signed["sequence"] != wantSigned["sequence"] || signed["hash"] != wantSigned["hash"] || signed["at"] != wantSigned["at"] {
		t.Fatalf("signed payload %s, answer %+v", payload, head)
	}
	return head
}

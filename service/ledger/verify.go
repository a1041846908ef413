package ledger

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Verifying the books
//
// A [Verifier] checks a database's books as its store reads them, without
// knowing any SQL: the store feeds it every row in a fixed order and the
// verifier keeps only what the later checks need (a body hash per chain
// link, a few words per ledger transaction and payment, a sum per
// account). What it checks:
//
//   - every row's shape: ids of the chart's forms, an entry's id, number,
//     wallet and time agreeing with its transaction, the entries of a
//     transaction numbered 1, 2, … without a gap, and [Transaction.Check]
//     (balanced per currency, accounts of the chart, a system account's
//     currency its own);
//   - the chain: links numbered from 1 without a gap, each link recomputed
//     from the one before and the body hash of its transaction ([Link],
//     [BodyHash]); every transaction either chained or waiting in the
//     sealer's queue, and none waiting that the sealer would already have
//     chained; optionally, the link an [Anchor] kept elsewhere;
//   - the pending transactions: a POST or VOID resolves a HOLD of its own
//     payment, and a HOLD is resolved at most once;
//   - the payments: every ledger transaction but an OPENING names a payment
//     that exists and moves the payment's amount on the payment's wallet
//     the way its kind does (see effects), and a payment made since the
//     books opened has exactly the ledger transactions its status requires
//     (see rules); an earlier one, at most those;
//   - the balances: every wallet's cached balances (its internal account's
//     available and held columns) equal the sums of its entries, no wallet
//     side is negative, and all accounts together sum to zero in each
//     currency.
//
// A problem names the first bad row it found (table, id, what is wrong);
// the verifier goes on and counts the others.

// Payment is what the verifier needs of a payment (a row of the service's
// transactions table).
type Payment struct {
	ID                   string // Transaction:<uuid>
	QuoteID              string // "" for transfers, deposits and fundings
	Type                 string // INCOMING or OUTGOING
	Status               string
	Outcome              string // the sandbox outcome (002 … 007), "" otherwise
	SourceAccountID      string // the paying wallet, an external account (transfer-in) or ""
	DestinationAccountID string
	SendingCurrency      string
	ReceivingCurrency    string
	SentAmount           int64
	ReceivedAmount       int64
	PaymentRail          string
	SenderUmaAddress     string // set on incoming UMA payments
	CreatedAt            time.Time
}

// EntryRow is a stored entry: its canonical fields (Entry) and the columns
// the store keeps beside them, which the verifier checks against its
// transaction.
type EntryRow struct {
	Entry
	ID                  string // LedgerEntry:<uuid of its transaction>-<N>
	LedgerTransactionID string
	N                   int64
	WalletID            string // the wallet's internal account id on a wallet's entry, else ""
	CreatedAt           time.Time
}

// Anchor is a chain link kept outside the database (the head GET
// /ledger/head answered at some time): the chain must still have link Seq
// and it must be Hash.
type Anchor struct {
	Seq  int64
	Hash Hash
}

// Problem is something wrong in the books, named by the row it was found
// in.
type Problem struct {
	Table string // ledger_transactions, ledger_entries, ledger_chain, ledger_unsealed, transactions, internal_accounts, settings
	ID    string // the row's id (a chain row: "seq N")
	What  string
}

func (p *Problem) Error() string { return p.Table + " " + p.ID + ": " + p.What }

// Report is what a verification checked and what it found.
type Report struct {
	Transactions int64 // ledger transactions
	Entries      int64
	Accounts     int64 // ledger accounts with entries (wallet sides and system accounts)
	Wallets      int64 // internal accounts whose cached balances were compared
	Payments     int64 // payments checked against their status
	Exempt       int64 // payments made before the books opened (only their ledger transactions' effects checked)
	Sealed       int64 // ledger transactions in the chain
	Unsealed     int64 // ledger transactions waiting in the sealer's queue
	Head         Head  // the chain's last link as stored
	OpenedAt     time.Time

	// Problems holds the first MaxProblems problems, in the order found;
	// ProblemCount counts them all.
	Problems     []Problem
	ProblemCount int64
}

// MaxProblems bounds the problems a Report keeps.
const MaxProblems = 100

// Err is the first problem, or nil when the books verify.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return &r.Problems[0]
}

// SealGrace is how long a transaction may wait in the sealer's queue after
// a later seal: the service seals four times a second, so a transaction
// still waiting a minute after a seal that came after it was written was
// put in the queue by hand (the instances' clocks must agree within it).
const SealGrace = time.Minute

// Verifier checks the books fed to it in this order (each step's rows in
// the order given):
//
//  1. Payment, every payment (any order);
//  2. Link, every chain row by seq;
//  3. Queued, every row of the sealer's queue (any order);
//  4. Transaction and Entry: the ledger transactions by id, and the
//     entries by id, each entry after the transaction it belongs to and
//     every transaction whose id sorts before the entry's;
//  5. Wallet, every internal account (any order);
//  6. Finish.
//
// A store that reads the two tables of step 4 in chunks feeds a chunk of
// transactions and then the entries up to the last one's.
type Verifier struct {
	opts   VerifyOptions
	phase  int
	report Report

	payments   []paymentState   // in the order fed
	paymentIdx map[string]int32 // payment id → index in payments

	links    []linkState
	chainIdx map[string]int32 // ledger transaction id → index in links
	queued   map[string]bool  // ledger transaction id → seen among the transactions

	// pending holds the transactions read whose entries may still come,
	// oldest first, from pendingAt on; their Entries and rows slices are
	// reused.
	pending   []pendingTx
	pendingAt int
	lastTx    string
	lastEntry string
	buf       []byte // the canonical form being hashed

	accounts map[string]*accountSum
	wallets  []walletRow
}

// VerifyOptions are what a verification needs beside the rows.
type VerifyOptions struct {
	// OpenedAt is when the books opened (the store's LedgerOpenedSetting);
	// the zero time is a problem.
	OpenedAt time.Time
	// Anchor, when set, is a link the chain must have.
	Anchor *Anchor
	// Payments and Links, when known, are how many payments and chain
	// rows will be fed: the verifier's tables are made that size at once
	// instead of growing.
	Payments, Links int
}

type paymentState struct {
	Payment
	lts []paymentLT // its ledger transactions, by id
}

type paymentLT struct {
	id, pending string
	kind        Kind
}

type linkState struct {
	seq      int64
	txID     string
	link     Hash
	sealedAt time.Time
	body     Hash
	seen     bool // its transaction was read
	gap      bool // a link is missing right before it
}

type pendingTx struct {
	t    Transaction
	rows []EntryRow
	bad  bool // a problem was named already; only the entries' count matters
}

type accountSum struct {
	currency string
	sum      int64
	wallet   string // InternalAccount id on a wallet's side
	side     Side
}

type walletRow struct {
	id, currency    string
	available, held int64
}

// NewVerifier starts a verification.
func NewVerifier(opts VerifyOptions) *Verifier {
	v := &Verifier{opts: opts, payments: make([]paymentState, 0, opts.Payments), paymentIdx: make(map[string]int32, opts.Payments),
		links: make([]linkState, 0, opts.Links), chainIdx: make(map[string]int32, opts.Links),
		queued: map[string]bool{}, accounts: map[string]*accountSum{}}
	v.report.OpenedAt = opts.OpenedAt
	if opts.OpenedAt.IsZero() {
		v.problem("settings", "ledger.opened_at", "missing: when the books opened is not recorded")
	}
	return v
}

func (v *Verifier) step(phase int, what string) {
	if phase < v.phase {
		panic("ledger: Verifier." + what + " called after a later step")
	}
	v.phase = phase
}

func (v *Verifier) problem(table, id, format string, args ...any) {
	v.report.ProblemCount++
	if len(v.report.Problems) < MaxProblems {
		v.report.Problems = append(v.report.Problems, Problem{Table: table, ID: id, What: fmt.Sprintf(format, args...)})
	}
}

// Payment adds a payment.
func (v *Verifier) Payment(p Payment) {
	v.step(1, "Payment")
	if _, dup := v.paymentIdx[p.ID]; dup {
		v.problem("transactions", p.ID, "appears twice")
		return
	}
	v.paymentIdx[p.ID] = int32(len(v.payments))
	v.payments = append(v.payments, paymentState{Payment: p})
}

// Link adds the chain row of seq.
func (v *Verifier) Link(seq int64, ledgerTransactionID string, link Hash, sealedAt time.Time) {
	v.step(2, "Link")
	want := int64(len(v.links)) + 1
	if len(v.links) > 0 {
		want = v.links[len(v.links)-1].seq + 1
	}
	l := linkState{seq: seq, txID: ledgerTransactionID, link: link, sealedAt: sealedAt}
	switch {
	case seq < want:
		v.problem("ledger_chain", seqName(seq), "out of order after seq %d", want-1)
		return
	case seq > want:
		missing := seqName(want)
		if seq > want+1 {
			missing = fmt.Sprintf("seq %d to %d", want, seq-1)
		}
		v.problem("ledger_chain", missing, "missing: the chain goes from seq %d to seq %d (rows deleted)", want-1, seq)
		l.gap = true
	}
	if _, dup := v.chainIdx[ledgerTransactionID]; dup {
		v.problem("ledger_chain", seqName(seq), "chains %s a second time", ledgerTransactionID)
	} else {
		v.chainIdx[ledgerTransactionID] = int32(len(v.links))
	}
	v.links = append(v.links, l)
	v.report.Head = Head{Seq: seq, Hash: link, At: sealedAt}
}

// Queued adds a row of the sealer's queue.
func (v *Verifier) Queued(ledgerTransactionID string) {
	v.step(3, "Queued")
	v.queued[ledgerTransactionID] = false
}

const (
	txPrefix    = "LedgerTransaction:"
	entryPrefix = "LedgerEntry:"
)

// Transaction adds a ledger transaction without its entries (t.Entries is
// ignored), which follow with Entry. t is copied.
func (v *Verifier) Transaction(t *Transaction) {
	v.step(4, "Transaction")
	if t.ID <= v.lastTx {
		v.problem("ledger_transactions", t.ID, "out of order after %s", v.lastTx)
		return
	}
	v.lastTx = t.ID
	if v.pendingAt > 0 {
		// Move the transactions still waiting for entries to the front,
		// swapping so that each slot keeps slices of its own to reuse.
		n := 0
		for i := v.pendingAt; i < len(v.pending); i++ {
			v.pending[n], v.pending[i] = v.pending[i], v.pending[n]
			n++
		}
		v.pending, v.pendingAt = v.pending[:n], 0
	}
	var p *pendingTx
	if len(v.pending) < cap(v.pending) {
		v.pending = v.pending[:len(v.pending)+1]
		p = &v.pending[len(v.pending)-1]
	} else {
		v.pending = append(v.pending, pendingTx{})
		p = &v.pending[len(v.pending)-1]
	}
	entries, rows := p.t.Entries[:0], p.rows[:0]
	*p = pendingTx{t: *t, rows: rows}
	p.t.Entries = entries
}

// Entry adds a stored entry.
func (v *Verifier) Entry(e *EntryRow) {
	v.step(4, "Entry")
	v.report.Entries++
	if e.ID <= v.lastEntry {
		v.problem("ledger_entries", e.ID, "out of order after %s", v.lastEntry)
		return
	}
	v.lastEntry = e.ID
	u, n, ok := entryKey(e.ID)
	if !ok {
		v.problem("ledger_entries", e.ID, "is not a LedgerEntry:<uuid>-<n> id")
		return
	}
	// Every transaction sorting before the entry's is complete.
	for v.pendingAt < len(v.pending) && strings.TrimPrefix(v.pending[v.pendingAt].t.ID, txPrefix) < u {
		v.finishTx(&v.pending[v.pendingAt])
		v.pendingAt++
	}
	if v.pendingAt == len(v.pending) || strings.TrimPrefix(v.pending[v.pendingAt].t.ID, txPrefix) != u {
		v.problem("ledger_entries", e.ID, "its ledger transaction %s%s does not exist", txPrefix, u)
		return
	}
	p := &v.pending[v.pendingAt]
	if p.bad {
		p.t.Entries = append(p.t.Entries, e.Entry)
		return
	}
	want := int64(len(p.t.Entries)) + 1
	wallet, _, isWallet := e.Account.Wallet()
	switch {
	case e.LedgerTransactionID != p.t.ID:
		v.problem("ledger_entries", e.ID, "says it belongs to %s, its id to %s", e.LedgerTransactionID, p.t.ID)
	case n != e.N:
		v.problem("ledger_entries", e.ID, "is numbered %d, its id says %d", e.N, n)
	case e.N > want:
		v.problem("ledger_entries", entryPrefix+u+"-"+strconv.FormatInt(want, 10), "missing: %s has entry %d but not %d (deleted)", p.t.ID, e.N, want)
	case e.N < want:
		v.problem("ledger_entries", e.ID, "out of order in %s", p.t.ID)
	case e.WalletID != wallet:
		v.problem("ledger_entries", e.ID, "names wallet %q, its account %s", e.WalletID, e.Account)
	case !e.CreatedAt.Equal(p.t.CreatedAt):
		v.problem("ledger_entries", e.ID, "dated %s, its transaction %s", e.CreatedAt.Format(time.RFC3339Nano), p.t.CreatedAt.Format(time.RFC3339Nano))
	case isWallet && (e.AvailableAfter < 0 || e.HeldAfter < 0):
		v.problem("ledger_entries", e.ID, "leaves the wallet at %d available, %d held", e.AvailableAfter, e.HeldAfter)
	case !isWallet && (e.AvailableAfter != 0 || e.HeldAfter != 0):
		v.problem("ledger_entries", e.ID, "carries wallet balances on system account %s", e.Account)
	default:
		p.t.Entries = append(p.t.Entries, e.Entry)
		p.rows = append(p.rows, *e)
		return
	}
	p.bad = true
	p.t.Entries = append(p.t.Entries, e.Entry)
}

// entryKey splits "LedgerEntry:<uuid>-<n>" into the uuid and n.
func entryKey(id string) (string, int64, bool) {
	rest, ok := strings.CutPrefix(id, entryPrefix)
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 0 || i == len(rest)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || n < 1 {
		return "", 0, false
	}
	return rest[:i], n, true
}

// finishTx checks a transaction whose entries are all in.
func (v *Verifier) finishTx(p *pendingTx) {
	t := &p.t
	v.report.Transactions++
	if u := strings.TrimPrefix(t.ID, txPrefix); len(u) != 36 || u == t.ID {
		v.problem("ledger_transactions", t.ID, "is not a LedgerTransaction:<uuid> id")
		return
	}
	// Its place: in the chain or in the queue, not both and not neither.
	idx, chained := v.chainIdx[t.ID]
	_, queued := v.queued[t.ID]
	switch {
	case chained && queued:
		v.problem("ledger_unsealed", t.ID, "waits in the sealer's queue but is chained already, at seq %d", v.links[idx].seq)
	case chained:
		v.report.Sealed++
	case queued:
		v.report.Unsealed++
		if head := v.report.Head; !head.At.IsZero() && t.CreatedAt.Before(head.At.Add(-SealGrace)) {
			v.problem("ledger_unsealed", t.ID, "dated %s, still waits for the sealer, which chained up to seq %d at %s (queued by hand?)",
				t.CreatedAt.Format(time.RFC3339Nano), head.Seq, head.At.Format(time.RFC3339Nano))
		}
	default:
		v.problem("ledger_transactions", t.ID, "is neither chained nor waiting in the sealer's queue (inserted by hand?)")
	}
	if queued {
		v.queued[t.ID] = true
	}
	if chained {
		v.buf = AppendCanonical(v.buf[:0], t)
		l := &v.links[idx]
		l.body, l.seen = sha256.Sum256(v.buf), true
	}
	if p.bad {
		return
	}
	if len(t.Entries) == 0 {
		v.problem("ledger_transactions", t.ID, "has no entries (deleted)")
		return
	}
	// The balances are what the entries sum to, whatever else is wrong
	// with their transaction.
	for i := range t.Entries {
		v.add(&t.Entries[i], &p.rows[i])
	}
	if err := t.Check(); err != nil {
		v.problem("ledger_transactions", t.ID, "%s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "ledger: "), t.ID+": "))
		return
	}
	v.checkPayment(t)
}

// add adds an entry to its account's sum.
func (v *Verifier) add(e *Entry, row *EntryRow) {
	a := v.accounts[string(e.Account)]
	if a == nil {
		a = &accountSum{currency: e.Currency}
		a.wallet, a.side, _ = e.Account.Wallet()
		v.accounts[string(e.Account)] = a
	}
	if a.currency != e.Currency {
		v.problem("ledger_entries", row.ID, "is in %s; the account's other entries are in %s", e.Currency, a.currency)
		return
	}
	s := a.sum + e.Amount
	if (e.Amount > 0) != (s > a.sum) {
		v.problem("ledger_entries", row.ID, "overflows the balance of %s", e.Account)
		return
	}
	a.sum = s
}

// ---- payments

// A payment's class is which code path made it and so which ledger
// transactions its status requires (service/payments).
type paymentClass string

const (
	classQuote       paymentClass = "quote paid from a wallet"                    // quotes.go, settlement.go
	classFunded      paymentClass = "just-in-time funded quote"                   // realtime.go: no source account
	classTransferOut paymentClass = "transfer-out"                                // transfers.go, cancel.go
	classTransferIn  paymentClass = "transfer-in"                                 // transfers.go: from an external account
	classDeposit     paymentClass = "deposit"                                     // transfers.go RecordDeposit: on a rail, no source
	classFunding     paymentClass = "sandbox funding"                             // transactions.go FundSandbox: no rail, no source
	classUMA         paymentClass = "incoming UMA payment"                        // incoming.go, to an internal account
	classUMAExternal paymentClass = "incoming UMA payment to an external account" // incoming.go: no balance moves
)

func classOf(p *Payment) paymentClass {
	switch {
	case p.SenderUmaAddress != "" && strings.HasPrefix(p.DestinationAccountID, "InternalAccount:"):
		return classUMA
	case p.SenderUmaAddress != "":
		return classUMAExternal
	case p.QuoteID != "" && p.SourceAccountID != "":
		return classQuote
	case p.QuoteID != "":
		return classFunded
	case p.Type == "OUTGOING":
		return classTransferOut
	case p.SourceAccountID != "":
		return classTransferIn
	case p.PaymentRail != "":
		return classDeposit
	}
	return classFunding
}

// rule is the ledger transactions a payment of class in status (and,
// when outcome is set, that sandbox outcome) has: exactly these for a
// payment made since the books opened. A HOLD without a POST or VOID
// stays pending.
type rule struct {
	class   paymentClass
	status  string
	outcome string
	needs   []Kind
}

var (
	none           = []Kind{}
	hold           = []Kind{KindHold}
	holdPost       = []Kind{KindHold, KindPost}
	holdVoid       = []Kind{KindHold, KindVoid}
	holdPostReturn = []Kind{KindHold, KindPost, KindReturn}
)

// rules is the money each status of each class of payment has moved, read
// from service/payments: an executed quote holds its total (ExecuteQuote)
// and the settlement worker posts it when it leaves (payOut), voids it when
// it fails or is rejected (voidPayment; sandbox 002, 004, 006) and returns
// it when it comes back (returnPayment, sandbox 005); sandbox 007 fails
// with the hold left pending. A transfer-out holds at once and is posted
// or voided (also when cancelled); a transfer-in, a deposit, a funding and
// an incoming UMA payment to a wallet credit it once, when completed. A
// just-in-time funded quote moves nothing until its payout passes through
// (passThrough).
var rules = []rule{
	{classQuote, "PENDING", "", none},
	{classQuote, "EXPIRED", "", none},
	{classQuote, "PROCESSING", "", hold},
	{classQuote, "COMPLETED", "", holdPost},
	{classQuote, "REFUNDED", "", holdPostReturn},
	{classQuote, "FAILED", "007", hold},
	{classQuote, "FAILED", "", holdVoid},
	{classQuote, "REJECTED", "", holdVoid},

	{classFunded, "PENDING", "", none},
	{classFunded, "EXPIRED", "", none},
	{classFunded, "PROCESSING", "", none},
	{classFunded, "COMPLETED", "", []Kind{KindTransit}},
	{classFunded, "REFUNDED", "", []Kind{KindTransit}},
	{classFunded, "FAILED", "", none},
	{classFunded, "REJECTED", "", none},

	{classTransferOut, "PENDING", "", hold},
	{classTransferOut, "PROCESSING", "", hold},
	{classTransferOut, "COMPLETED", "", holdPost},
	{classTransferOut, "FAILED", "", holdVoid},

	{classTransferIn, "PENDING", "", none},
	{classTransferIn, "PROCESSING", "", none},
	{classTransferIn, "COMPLETED", "", []Kind{KindIncoming}},
	{classTransferIn, "FAILED", "", none},

	{classDeposit, "COMPLETED", "", []Kind{KindDeposit}},
	{classFunding, "COMPLETED", "", []Kind{KindFunding}},

	{classUMA, "PENDING", "", none},
	{classUMA, "PROCESSING", "", none},
	{classUMA, "COMPLETED", "", []Kind{KindIncoming}},
	{classUMA, "FAILED", "", none},
	{classUMA, "REJECTED", "", none},

	{classUMAExternal, "PENDING", "", none},
	{classUMAExternal, "PROCESSING", "", none},
	{classUMAExternal, "COMPLETED", "", none},
	{classUMAExternal, "FAILED", "", none},
	{classUMAExternal, "REJECTED", "", none},
}

// ruleFor finds the rule of p, the first that matches.
func ruleFor(p *Payment) (rule, bool) {
	c := classOf(p)
	for _, r := range rules {
		if r.class == c && r.status == p.Status && (r.outcome == "" || r.outcome == p.Outcome) {
			return r, true
		}
	}
	return rule{class: c}, false
}

// effect is what a ledger transaction of a kind does to its payment's
// wallet: the side it moves (the payment's source or destination), and the
// payment's amount (sent from the source, received at the destination)
// times these on the wallet's available and held sides.
type effect struct {
	destination     bool
	available, held int64
}

var effects = map[Kind]effect{
	KindHold:     {available: -1, held: +1},          // holdPayment
	KindPost:     {held: -1},                         // payOut
	KindVoid:     {available: +1, held: -1},          // voidPayment
	KindReturn:   {available: +1},                    // returnPayment: the POST reversed, all of it back
	KindFunding:  {destination: true, available: +1}, // FundSandbox
	KindDeposit:  {destination: true, available: +1}, // RecordDeposit
	KindIncoming: {destination: true, available: +1}, // transfer-in, incoming UMA
	KindTransit:  {},                                 // passThrough: no wallet
}

// checkPayment checks that a balanced transaction belongs to a payment
// and moves the payment's money as its kind does, and files it with the
// payment.
func (v *Verifier) checkPayment(t *Transaction) {
	if t.Kind == KindOpening {
		// The migration that opened the books wrote them, one per wallet
		// that had money, with the wallet's uuid for id, at the time it
		// recorded as the opening.
		got, wallets := oneWalletMove(t)
		switch {
		case t.TransactionID != "":
			v.problem("ledger_transactions", t.ID, "is an OPENING balance that names payment %s", t.TransactionID)
		case !t.CreatedAt.Equal(v.opts.OpenedAt):
			v.problem("ledger_transactions", t.ID, "is an OPENING balance dated %s; the books opened at %s",
				t.CreatedAt.Format(time.RFC3339Nano), v.opts.OpenedAt.Format(time.RFC3339Nano))
		case wallets != 1 || strings.TrimPrefix(got.Wallet, "InternalAccount:") != strings.TrimPrefix(t.ID, txPrefix):
			v.problem("ledger_transactions", t.ID, "is an OPENING balance of %s; an opening balance's id is its wallet's", describeMoves(t.WalletMoves()))
		}
		return
	}
	if t.TransactionID == "" {
		v.problem("ledger_transactions", t.ID, "is a %s that names no payment", t.Kind)
		return
	}
	i, found := v.paymentIdx[t.TransactionID]
	if !found {
		v.problem("ledger_transactions", t.ID, "is a %s of payment %s, which does not exist", t.Kind, t.TransactionID)
		return
	}
	p := &v.payments[i]
	if t.QuoteID != p.QuoteID {
		v.problem("ledger_transactions", t.ID, "names quote %q; its payment %s has quote %q", t.QuoteID, p.ID, p.QuoteID)
		return
	}
	eff := effects[t.Kind]
	var wantWallet, cur string
	var amount int64
	switch {
	case t.Kind == KindTransit:
	case eff.destination:
		wantWallet, cur, amount = p.DestinationAccountID, p.ReceivingCurrency, p.ReceivedAmount
	default:
		wantWallet, cur, amount = p.SourceAccountID, p.SendingCurrency, p.SentAmount
	}
	want := WalletMove{Wallet: wantWallet, Currency: cur, Available: eff.available * amount, Held: eff.held * amount}
	got, wallets := oneWalletMove(t)
	switch {
	case wantWallet == "" && wallets > 0:
		v.problem("ledger_transactions", t.ID, "is a %s of payment %s and moves wallet %s; it should move none", t.Kind, p.ID, got.Wallet)
		return
	case wantWallet != "" && (wallets != 1 || got != want):
		v.problem("ledger_transactions", t.ID, "is a %s of payment %s and moves %s; it should move %s",
			t.Kind, p.ID, describeMoves(t.WalletMoves()), describeMoves([]WalletMove{want}))
		return
	}
	p.lts = append(p.lts, paymentLT{id: t.ID, kind: t.Kind, pending: t.PendingID})
}

// oneWalletMove is WalletMoves for the transactions of one wallet, without
// a slice: the move of the first wallet, and how many wallets it moves.
func oneWalletMove(t *Transaction) (WalletMove, int) {
	var m WalletMove
	wallets := 0
	for i := range t.Entries {
		e := &t.Entries[i]
		w, side, ok := e.Account.Wallet()
		switch {
		case !ok:
			continue
		case wallets == 0:
			m.Wallet, m.Currency, wallets = w, e.Currency, 1
		case w != m.Wallet:
			wallets = 2
			continue
		}
		if side == Held {
			m.Held += e.Amount
		} else {
			m.Available += e.Amount
		}
	}
	return m, wallets
}

func describeMoves(ms []WalletMove) string {
	if len(ms) == 0 {
		return "no wallet"
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s by %+d available, %+d held %s", m.Wallet, m.Available, m.Held, m.Currency))
	}
	return strings.Join(parts, " and ")
}

// ---- wallets

// Wallet adds an internal account with its cached balances.
func (v *Verifier) Wallet(id, currency string, available, held int64) {
	v.step(5, "Wallet")
	v.flushPending()
	v.wallets = append(v.wallets, walletRow{id: id, currency: currency, available: available, held: held})
}

func (v *Verifier) flushPending() {
	for ; v.pendingAt < len(v.pending); v.pendingAt++ {
		v.finishTx(&v.pending[v.pendingAt])
	}
}

// ---- the end

// Finish runs the checks that need every row and reports.
func (v *Verifier) Finish() Report {
	v.step(6, "Finish")
	v.flushPending()
	v.checkChain()
	var gone []string
	for id, seen := range v.queued {
		if !seen {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		v.problem("ledger_unsealed", id, "names a ledger transaction that does not exist (deleted)")
	}
	v.checkPayments()
	v.checkWallets()
	v.report.Accounts = int64(len(v.accounts))
	return v.report
}

// checkChain recomputes every link from the one before it and its
// transaction's body hash, and compares the anchor.
func (v *Verifier) checkChain() {
	var prev Hash
	skip := false // the link before was changed or is missing: this one cannot be checked
	for i := range v.links {
		l := &v.links[i]
		switch {
		case !l.seen:
			v.problem("ledger_chain", seqName(l.seq), "chains %s, which does not exist (deleted)", l.txID)
		case skip || l.gap:
		case Link(prev, l.seq, l.body) != l.link:
			next := i + 1
			switch {
			case next < len(v.links) && v.links[next].seen && !v.links[next].gap &&
				Link(l.link, v.links[next].seq, v.links[next].body) == v.links[next].link:
				// The next link follows from this one as stored: the link
				// is the one sealed, its transaction is not.
				v.problem("ledger_transactions", l.txID, "changed after it was sealed at %s: its fields or entries no longer hash to the chain's link", seqName(l.seq))
			case next < len(v.links):
				v.problem("ledger_chain", seqName(l.seq), "link %s does not follow from link %d and %s, and the next link does not follow from it (the link was changed)",
					l.link, l.seq-1, l.txID)
				skip = true
				prev = l.link
				continue
			default:
				v.problem("ledger_chain", seqName(l.seq), "the last link does not follow from link %d and %s (the link or the transaction changed)", l.seq-1, l.txID)
			}
		}
		skip = false
		prev = l.link
	}
	if a := v.opts.Anchor; a != nil {
		i, found := slices.BinarySearchFunc(v.links, a.Seq, func(l linkState, seq int64) int { return cmpInt(l.seq, seq) })
		switch {
		case v.report.Head.Seq < a.Seq:
			v.problem("ledger_chain", seqName(a.Seq), "missing: the chain ends at seq %d, the anchor has link %d (rows deleted)", v.report.Head.Seq, a.Seq)
		case !found:
			v.problem("ledger_chain", seqName(a.Seq), "missing: the anchor has this link (rows deleted)")
		case v.links[i].link != a.Hash:
			v.problem("ledger_chain", seqName(a.Seq), "link %s differs from the anchor's %s (the chain was rewritten)", v.links[i].link, a.Hash)
		}
	}
}

// seqName names a chain row.
func seqName(seq int64) string { return "seq " + strconv.FormatInt(seq, 10) }

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkPayments checks each payment's ledger transactions against its
// status, and its holds' resolution.
func (v *Verifier) checkPayments() {
	for i := range v.payments {
		p := &v.payments[i]
		exempt := p.CreatedAt.Before(v.opts.OpenedAt)
		if exempt {
			v.report.Exempt++
		} else {
			v.report.Payments++
		}
		if !v.checkResolutions(p, exempt) {
			continue
		}
		r, ok := ruleFor(&p.Payment)
		if !ok {
			if !exempt || len(p.lts) > 0 {
				v.problem("transactions", p.ID, "is a %s in status %s, which no rule covers", r.class, p.Status)
			}
			continue
		}
		has := make([]Kind, len(p.lts))
		for i, lt := range p.lts {
			has[i] = lt.kind
		}
		if exempt && subset(has, r.needs) || !exempt && sameKinds(has, r.needs) {
			continue
		}
		v.problem("transactions", p.ID, "is a %s %s%s: that status needs %s in the books; it has %s",
			p.Status, r.class, outcomeNote(p.Outcome), kindList(r.needs), kindList(has))
	}
}

// checkResolutions checks that each POST and VOID of p resolves a HOLD
// of p (one made before the books may resolve none) and that no HOLD is
// resolved twice.
func (v *Verifier) checkResolutions(p *paymentState, exempt bool) bool {
	resolved := map[string]string{}
	for _, lt := range p.lts {
		if lt.kind != KindPost && lt.kind != KindVoid {
			continue
		}
		if lt.pending == "" {
			if !exempt {
				v.problem("ledger_transactions", lt.id, "is a %s of payment %s that resolves no HOLD", lt.kind, p.ID)
				return false
			}
			continue
		}
		if !slices.ContainsFunc(p.lts, func(h paymentLT) bool { return h.id == lt.pending && h.kind == KindHold }) {
			v.problem("ledger_transactions", lt.id, "resolves %s, which is not a HOLD of its payment %s", lt.pending, p.ID)
			return false
		}
		if other, twice := resolved[lt.pending]; twice {
			v.problem("ledger_transactions", lt.id, "resolves %s, which %s resolved already", lt.pending, other)
			return false
		}
		resolved[lt.pending] = lt.id
	}
	return true
}

func outcomeNote(outcome string) string {
	if outcome == "" {
		return ""
	}
	return " (sandbox outcome " + outcome + ")"
}

func kindList(ks []Kind) string {
	if len(ks) == 0 {
		return "no ledger transaction"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func sortedKinds(ks []Kind) []Kind {
	s := slices.Clone(ks)
	slices.Sort(s)
	return s
}

func sameKinds(a, b []Kind) bool { return slices.Equal(sortedKinds(a), sortedKinds(b)) }

// subset reports whether every kind of a is in b, as many times at most.
func subset(a, b []Kind) bool {
	left := slices.Clone(b)
	for _, k := range a {
		i := slices.Index(left, k)
		if i < 0 {
			return false
		}
		left = slices.Delete(left, i, i+1)
	}
	return true
}

// checkWallets compares each wallet's cached balances with its entries,
// and sums every account per currency.
func (v *Verifier) checkWallets() {
	type sides struct {
		currency        string
		available, held *accountSum
	}
	byWallet := map[string]*sides{}
	totals := map[string]int64{}
	names := make([]string, 0, len(v.accounts))
	for name := range v.accounts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a := v.accounts[name]
		totals[a.currency] += a.sum
		if a.wallet == "" {
			continue
		}
		if a.sum < 0 {
			v.problem("ledger_entries", name, "the wallet's %s side sums to %d, below zero", a.side, a.sum)
		}
		s := byWallet[a.wallet]
		if s == nil {
			s = &sides{currency: a.currency}
			byWallet[a.wallet] = s
		}
		if a.side == Held {
			s.held = a
		} else {
			s.available = a
		}
	}
	slices.SortFunc(v.wallets, func(a, b walletRow) int { return strings.Compare(a.id, b.id) })
	for _, w := range v.wallets {
		v.report.Wallets++
		s := byWallet[w.id]
		delete(byWallet, w.id)
		var avail, held int64
		if s != nil {
			if s.available != nil {
				avail = s.available.sum
			}
			if s.held != nil {
				held = s.held.sum
			}
			if s.currency != w.currency {
				v.problem("internal_accounts", w.id, "holds %s; its entries are in %s", w.currency, s.currency)
				continue
			}
		}
		switch {
		case w.available != avail || w.held != held:
			v.problem("internal_accounts", w.id, "caches %d available and %d held; its entries sum to %d and %d (changed by hand?)",
				w.available, w.held, avail, held)
		case w.available < 0 || w.held < 0:
			v.problem("internal_accounts", w.id, "has a negative balance (%d available, %d held)", w.available, w.held)
		}
	}
	orphans := make([]string, 0, len(byWallet))
	for id := range byWallet {
		orphans = append(orphans, id)
	}
	slices.Sort(orphans)
	for _, id := range orphans {
		v.problem("ledger_entries", string(WalletAccount(id, Available)), "are entries of wallet %s, which does not exist", id)
	}
	curs := make([]string, 0, len(totals))
	for c := range totals {
		curs = append(curs, c)
	}
	slices.Sort(curs)
	for _, c := range curs {
		if totals[c] != 0 {
			v.problem("ledger_entries", "currency "+c, "all accounts together sum to %d, not zero", totals[c])
		}
	}
}

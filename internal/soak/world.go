package soak

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"paywallet/shared/wire"
)

// The soak's model of the world: the customers it made and every money
// request it sent with the answer it got. The checks at the end compare
// the books with this record.

// The sandbox outcomes the soak pays and transfers to: the last three
// digits of an external account's identifier choose what the simulated
// network does (payments/settlement.go, transfers.go). The accounts ending
// in 003 make a payment wait six minutes and those ending in 005 a
// transfer thirty seconds, longer than a run waits for, so quotes never
// go to "003" and transfers never to "005".
const (
	ok      = ""    // settles
	eur     = "eur" // a euro account (IBAN) that settles: the payment crosses currencies
	failed2 = "002" // quote: execution fails; transfer: insufficient funds
	closed3 = "003" // transfer: account closed
	failed4 = "004" // quote: offramp fails; transfer: compliance rejects
	return5 = "005" // quote: completes, then comes back (REFUNDED)
	reject6 = "006" // quote: the recipient rejects it
	stuck7  = "007" // quote: payout and refund fail: the money stays held
)

// Where each operation goes, repeated to weigh the draw.
var (
	quoteOutcomes    = []string{ok, ok, ok, eur, failed2, failed4, return5, reject6, stuck7}
	transferInFrom   = []string{ok, ok, ok, failed2, closed3, failed4}
	transferOutTo    = []string{ok, ok, ok, failed2, closed3, failed4, reject6}
	externalOutcomes = []string{ok, eur, failed2, closed3, failed4, return5, reject6, stuck7}
)

// customer is a customer of the soak with its embedded wallet (USD), one
// external account per outcome and an agent.
type customer struct {
	n          int
	id, wallet string
	depositRef string
	accounts   map[string]string // outcome -> ExternalAccount id
	agent      agent
}

// agent is the customer's agent: AUTO below agentThreshold, the
// platform's approval above it.
type agent struct {
	id, token string
}

// agentThreshold is the amount (USD cents) above which the agents' policy
// holds a payment for the platform's approval.
const agentThreshold = 20_000

// funding is an acknowledged sandbox funding.
type funding struct {
	wallet string
	amount int64
}

// deposit is a bank deposit recorded with `paymentsd deposit`.
type deposit struct {
	wallet, bankRef string
	amount          int64
	txID            string // "" when the answer was lost and the retry found it recorded
}

// transfer is an acknowledged transfer-in or transfer-out.
type transfer struct {
	in      bool
	wallet  string
	outcome string
	amount  int64
	txID    string
	rail    string
	agent   bool
	// cancelTried: a cancel was sent; cancelled: one was answered 200.
	cancelTried, cancelled bool
}

// payment is a quote the soak made and what became of its executes.
type payment struct {
	quoteID, txID string
	wallet        string // the paying wallet ("" for a just-in-time funded quote)
	outcome       string
	total         int64 // totalSendingAmount (USD)
	fee           int64 // feesIncluded, of total
	received      int64
	receiving     string
	rail          string
	realtime      bool
	by            string // who pays how (see worker.pay): "platform", "agent" or "realtime"

	mu       sync.Mutex
	winners  []string // the requests answered as having executed it
	refusals []string
}

func (p *payment) won(what string) {
	p.mu.Lock()
	p.winners = append(p.winners, what)
	p.mu.Unlock()
}

func (p *payment) refused(what string, a answer) {
	p.mu.Lock()
	p.refusals = append(p.refusals, fmt.Sprintf("%s: %d %s", what, a.status, a.code()))
	p.mu.Unlock()
}

// world is the soak's record of one round.
type world struct {
	cfg       Config
	c         *client
	customers []*customer

	mu        sync.Mutex
	fundings  []funding
	deposits  []*deposit
	transfers []*transfer
	payments  []*payment
	problems  []error        // found while running
	counts    map[string]int // operations drawn, refusals by kind
}

func (w *world) problem(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	w.mu.Lock()
	w.problems = append(w.problems, err)
	w.mu.Unlock()
	w.cfg.Logf("PROBLEM: %v", err)
}

func (w *world) count(what string) {
	w.mu.Lock()
	w.counts[what]++
	w.mu.Unlock()
}

// setup makes the customers: each with its wallet, an external account per
// outcome (ACTIVE once the verifier has seen them) and an agent.
func (w *world) setup(ctx context.Context, rnd *rand.Rand, n int) error {
	for i := range n {
		c, err := w.newCustomer(ctx, rnd, i)
		if err != nil {
			return fmt.Errorf("customer %d: %w", i, err)
		}
		w.customers = append(w.customers, c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, c := range w.customers {
		for _, id := range c.accounts {
			for {
				var a wire.ExternalAccount
				if err := w.expect(ctx, rnd, request{method: "GET", path: "/customers/external-accounts/" + id}, http.StatusOK, &a); err != nil {
					return err
				}
				if a.Status == "ACTIVE" {
					break
				}
				if a.Status != "PENDING" || time.Now().After(deadline) {
					return fmt.Errorf("external account %s is %s", id, a.Status)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	return nil
}

func (w *world) newCustomer(ctx context.Context, rnd *rand.Rand, i int) (*customer, error) {
	c := &customer{n: i, accounts: map[string]string{}}
	email := fmt.Sprintf("soak-%d-%d@soak.example.com", w.cfg.Seed%1_000_000, i)
	var cust wire.Customer
	if err := w.expect(ctx, rnd, request{method: "POST", path: "/customers",
		body: wire.CustomerCreateRequest{PlatformCustomerID: email, CustomerType: "INDIVIDUAL", Email: email, FullName: "Ana Maria Diaz"}},
		http.StatusCreated, &cust); err != nil {
		return nil, err
	}
	c.id = cust.ID
	var accts wire.List[wire.InternalAccount]
	if err := w.expect(ctx, rnd, request{method: "GET", path: "/customers/internal-accounts?type=EMBEDDED_WALLET&customerId=" + url.QueryEscape(c.id)},
		http.StatusOK, &accts); err != nil {
		return nil, err
	}
	if len(accts.Data) != 1 || len(accts.Data[0].FundingPaymentInstructions) != 1 {
		return nil, fmt.Errorf("customer %s has wallets %+v", c.id, accts.Data)
	}
	c.wallet = accts.Data[0].ID
	c.depositRef, _ = accts.Data[0].FundingPaymentInstructions[0].AccountOrWalletInfo["reference"].(string)
	for j, outcome := range externalOutcomes {
		body := externalAccount(c.id, i, j, outcome)
		var a wire.ExternalAccount
		if err := w.expect(ctx, rnd, request{method: "POST", path: "/customers/external-accounts", body: body}, http.StatusCreated, &a); err != nil {
			return nil, err
		}
		c.accounts[outcome] = a.ID
	}
	var ag struct {
		ID string `json:"id"`
	}
	policy := map[string]any{
		"permissions":          []string{"VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS"},
		"defaultExecutionMode": "AUTO",
		"spendingLimits": map[string]any{"currency": "USD", "perTransactionLimit": int64(1) << 40,
			"dailyLimit": int64(1) << 40, "monthlyLimit": int64(1) << 40},
		"approvalThresholds": map[string]any{"currency": "USD", "amount": agentThreshold},
	}
	if err := w.expect(ctx, rnd, request{method: "POST", path: "/agents",
		body: map[string]any{"customerId": c.id, "name": fmt.Sprintf("soak agent %d", i), "policy": policy}},
		http.StatusCreated, &ag); err != nil {
		return nil, err
	}
	var code struct {
		Code string `json:"code"`
	}
	if err := w.expect(ctx, rnd, request{method: "POST", path: "/agents/" + ag.ID + "/device-codes"}, http.StatusCreated, &code); err != nil {
		return nil, err
	}
	var access struct {
		AccessToken string `json:"accessToken"`
	}
	if err := w.expect(ctx, rnd, request{method: "POST", path: "/agents/device-codes/" + code.Code + "/redeem"}, http.StatusOK, &access); err != nil {
		return nil, err
	}
	c.agent = agent{id: ag.ID, token: access.AccessToken}
	return c, nil
}

// expect sends r (retrying lost answers) and decodes an answer of status
// want into out; another status is an error.
func (w *world) expect(ctx context.Context, rnd *rand.Rand, r request, want int, out any) error {
	a, err := w.c.do(ctx, rnd, r)
	if err != nil {
		return err
	}
	if a.status != want {
		return fmt.Errorf("%s %s: %d %s, want %d", r.method, r.path, a.status, clip(a.body), want)
	}
	if out == nil {
		return nil
	}
	return a.decode(out)
}

// externalAccount is the body of customer i's external account j, whose
// identifier ends in outcome's digits (a USD account), or a euro account.
func externalAccount(customerID string, i, j int, outcome string) map[string]any {
	beneficiary := map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Maria Diaz",
		"address": map[string]any{"line1": "1 Main Street", "city": "Springfield", "postalCode": "62701", "country": "US"}}
	digits := outcome
	if digits == ok || digits == eur {
		digits = "321" // no sandbox pattern
	}
	if outcome == eur {
		beneficiary["address"] = map[string]any{"line1": "Hauptstraße 5", "city": "Berlin", "postalCode": "10115", "country": "DE"}
		return map[string]any{"customerId": customerID, "currency": "EUR", "platformAccountId": fmt.Sprintf("soak-%d-%d", i, j),
			"accountInfo": map[string]any{"accountType": "EUR_ACCOUNT", "iban": germanIBAN(int64(i*100+j)*1000 + 321), "beneficiary": beneficiary}}
	}
	return map[string]any{"customerId": customerID, "currency": "USD", "platformAccountId": fmt.Sprintf("soak-%d-%d", i, j),
		"accountInfo": map[string]any{"accountType": "USD_ACCOUNT", "accountNumber": fmt.Sprintf("9%04d%04d%s", i, j, digits),
			"routingNumber": "021000021", "bankAccountType": "CHECKING", "bankName": "Chase Bank", "beneficiary": beneficiary}}
}

// germanIBAN is a valid German IBAN (ISO 13616 check digits) ending in
// the ten digits of n.
func germanIBAN(n int64) string {
	bban := "37040044" + fmt.Sprintf("%010d", n%10_000_000_000)
	num, _ := new(big.Int).SetString(bban+"131400", 10) // DE00 moved to the end, letters as numbers
	return fmt.Sprintf("DE%02d%s", 98-new(big.Int).Mod(num, big.NewInt(97)).Int64(), bban)
}

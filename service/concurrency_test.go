package service

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

// TestConcurrentMoney fires many executes (each quote by two requests at
// once) and fundings at one wallet, on SQLite and on PostgreSQL, and checks
// the books: no balance below zero, a quote executes at most once, every
// debit has exactly one PROCESSING transaction, and available + held always
// equals what was funded until settlement, after which the completed
// payments account for the rest. The books balance after the races and
// after the settlement (storetest.CheckBooks).
func TestConcurrentMoney(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			opts := []func(*Config){sandbox, func(c *Config) { c.SettlementDelay = time.Second }}
			if store == "postgres" {
				opts = append(opts, onPostgres(t))
			}
			e := newEnv(t, opts...)
			const (
				initial  = 10_000
				price    = 1_000
				quotes   = 16
				fundings = 8
				topUp    = 250
			)
			p := e.newPayer("race-"+store+"@example.com", initial)
			dest := e.destination(p, "12345")
			qs := make([]wire.Quote, quotes)
			for i := range qs {
				qs[i] = e.quote(quoteBody(p, dest.ID, "SENDING", price))
			}
			var mu sync.Mutex
			executed := map[string]int{}
			statuses := map[int]int{}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range qs {
				for j := range 2 {
					wg.Go(func() {
						<-start
						r := e.do("POST", "/quotes/"+qs[i].ID+"/execute", nil, map[string]string{
							wire.HeaderWalletSignature: mustStamp(t, p.key, payloadOf(t, qs[i])),
							wire.HeaderIdempotencyKey:  fmt.Sprintf("%d-%d", i, j),
						})
						mu.Lock()
						defer mu.Unlock()
						statuses[r.status]++
						if r.status == http.StatusOK {
							executed[qs[i].ID]++
						}
					})
				}
			}
			for range fundings {
				wg.Go(func() {
					<-start
					r := e.do("POST", "/sandbox/internal-accounts/"+p.account.ID+"/fund", map[string]any{"amount": topUp}, nil)
					if r.status != http.StatusOK {
						t.Errorf("funding: %d %s", r.status, r.body)
					}
				})
			}
			close(start)
			wg.Wait()
			for code, n := range statuses {
				if code != http.StatusOK && code != http.StatusConflict && code != http.StatusBadRequest {
					t.Fatalf("%d answers with status %d (all: %v)", n, code, statuses)
				}
			}
			funded := int64(initial + fundings*topUp)
			var debits int64
			for id, n := range executed {
				if n != 1 {
					t.Fatalf("quote %s executed %d times", id, n)
				}
				debits += price
			}
			if len(executed) < int(initial/price) || debits > funded {
				t.Fatalf("%d quotes executed for %d funded (statuses %v)", len(executed), funded, statuses)
			}
			a := e.account(p.account.ID)
			if a.Balance.Amount < 0 || a.TotalBalance.Amount != funded || a.Balance.Amount != funded-debits {
				t.Fatalf("balance %d total %d after %d debits of %d funded", a.Balance.Amount, a.TotalBalance.Amount, debits, funded)
			}
			processing := 0
			for _, q := range qs {
				x := e.transaction(q.TransactionID)
				switch {
				case executed[q.ID] == 1 && x.Status != "PROCESSING", executed[q.ID] == 0 && x.Status != "PENDING":
					t.Fatalf("quote executed %d times has transaction %s", executed[q.ID], x.Status)
				}
				if x.Status == "PROCESSING" {
					processing++
				}
			}
			if processing != len(executed) {
				t.Fatalf("%d PROCESSING transactions for %d executes", processing, len(executed))
			}
			storetest.CheckBooks(t, e.store)

			// Settle with two workers at once: each payment completes once.
			e.clock.Advance(time.Second)
			var settled [2]int
			for i := range settled {
				wg.Go(func() {
					n, err := e.svc.SettleDue(t.Context())
					if err != nil {
						t.Error(err)
					}
					settled[i] = n
				})
			}
			wg.Wait()
			if settled[0]+settled[1] != len(executed) {
				t.Fatalf("workers applied %v for %d payments", settled, len(executed))
			}
			a = e.account(p.account.ID)
			if a.Balance.Amount != funded-debits || a.TotalBalance.Amount != funded-debits {
				t.Fatalf("after settlement: balance %d total %d, want %d", a.Balance.Amount, a.TotalBalance.Amount, funded-debits)
			}
			storetest.CheckBooks(t, e.store)
		})
	}
}

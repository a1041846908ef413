package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
)

// scaleBatch is how many accounts one store transaction inserts.
const scaleBatch = 2000

// RunScale measures how reading external accounts slows down as the store
// fills up. For each size in o.Scales (ascending; each size adds to the
// previous one) it inserts the missing accounts directly through the store
// API, in transactions of 2000 rows, and then measures with one client:
//
//   - list: GET /customers/external-accounts?customerId=<the big
//     customer>&limit=20, the first page of the customer that holds half of
//     all accounts; 200 with totalCount equal to what that customer holds.
//     Listing counts the customer's accounts as well as fetching the page,
//     so this is where the number of stored rows shows.
//   - get: GET /customers/external-accounts/{id} for ids drawn over all
//     stored accounts; 200.
//
// The other half of the accounts belongs to customers of ten accounts each.
// Rows are what the API would store: valid USD and EUR accountInfo in
// canonical JSON with its fingerprint, ACTIVE with the verification result
// production gives (UNSUPPORTED). On PostgreSQL the tables are ANALYZEd
// after each insert, as autovacuum would do before long, so that the
// planner does not work from the statistics of an empty table.
func RunScale(ctx context.Context, o Options) ([]ScaleCell, error) {
	p, err := o.plan()
	if err != nil {
		return nil, err
	}
	if err := checkAccountBodies(); err != nil {
		return nil, err
	}
	var cells []ScaleCell
	for _, kind := range p.stores() {
		c, err := runScale(ctx, p, kind)
		cells = append(cells, c...)
		if err != nil {
			return cells, fmt.Errorf("load: scale on %s: %w", kind, err)
		}
	}
	return cells, nil
}

// scaleState is what a scale run has stored so far.
type scaleState struct {
	big      string   // the customer whose list is measured
	bigCount int      // accounts of big
	small    []string // the ten-account customers, by index
	ids      []string // every account id, in insertion order
}

func runScale(ctx context.Context, p plan, kind string) ([]ScaleCell, error) {
	s, err := startStack(ctx, p, kind, "scale")
	if err != nil {
		return nil, err
	}
	defer s.close()
	big, err := s.newCustomer(ctx, "scale-big")
	if err != nil {
		return nil, err
	}
	st := &scaleState{big: big.id}
	var cells []ScaleCell
	for _, target := range p.scales {
		add := target - len(st.ids)
		t0 := time.Now()
		if err := s.insertAccounts(ctx, st, add); err != nil {
			return cells, err
		}
		secs := time.Since(t0).Seconds()
		if s.pgExec != nil {
			if err := s.pgExec(ctx, "ANALYZE {schema}.external_accounts, {schema}.customers"); err != nil {
				return cells, err
			}
		}
		p.log("%-8s inserted %d external accounts (%d in all, %d of the listed customer) in %.2fs (%.0f rows/s)",
			kind, add, len(st.ids), st.bigCount, secs, float64(add)/secs)

		cell := ScaleCell{Store: kind, Accounts: len(st.ids), ListCustomerAccounts: st.bigCount, Inserted: add, InsertSeconds: secs}
		listPath := "/customers/external-accounts?limit=20&customerId=" + st.big
		wantTotal := []byte(`"totalCount":` + strconv.Itoa(st.bigCount))
		cell.List = Run(ctx, p.scaleClient, p.dur, p.cap, func(ctx context.Context, _, _ int) error {
			status, body, err := s.api.do(ctx, "GET", listPath, nil)
			switch {
			case err != nil:
				return err
			case status != http.StatusOK || !bytes.Contains(body, wantTotal):
				return fmt.Errorf("GET %s: status %d, want 200 with %s: %s", listPath, status, wantTotal, clip(body))
			}
			return nil
		})
		logCell(p, kind, "list-external-accounts", cell.List, fmt.Sprintf(" accounts=%d", cell.Accounts))
		all := st.ids
		cell.Get = Run(ctx, p.scaleClient, p.dur, p.cap, func(ctx context.Context, client, seq int) error {
			id := all[spread(client, seq)%uint64(len(all))]
			status, body, err := s.api.do(ctx, "GET", "/customers/external-accounts/"+id, nil)
			switch {
			case err != nil:
				return err
			case status != http.StatusOK || !bytes.Contains(body, []byte(id)):
				return fmt.Errorf("GET /customers/external-accounts/%s: status %d: %s", id, status, clip(body))
			}
			return nil
		})
		logCell(p, kind, "get-external-account", cell.Get, fmt.Sprintf(" accounts=%d", cell.Accounts))
		cells = append(cells, cell)
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}
	return cells, nil
}

// insertAccounts stores n more accounts: even-numbered ones go to the big
// customer, odd-numbered ones to the ten-account customers, which are
// created first (in one transaction) so that the account batches can run
// in any order. SQLite has one writer, so its batches run one after the
// other; PostgreSQL's run four at a time.
func (s *stack) insertAccounts(ctx context.Context, st *scaleState, n int) error {
	first := len(st.ids)
	var newCustomers []store.Customer
	for k := first; k < first+n; k++ {
		if k%2 == 1 && ((k-1)/2)%10 == 0 {
			now := time.Now().UTC().Truncate(time.Microsecond)
			id := ids.New("Customer")
			newCustomers = append(newCustomers, store.Customer{
				ID: id, PlatformCustomerID: "scale-" + strconv.Itoa(len(st.small)+len(newCustomers)), CustomerType: "INDIVIDUAL",
				UmaAddress: "$" + strings.ReplaceAll(strings.TrimPrefix(id, "Customer:"), "-", "")[:16] + "@uma.localhost",
				CreatedAt:  now, UpdatedAt: now,
			})
		}
	}
	if len(newCustomers) > 0 {
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			for i := range newCustomers {
				if err := tx.CreateCustomer(ctx, &newCustomers[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, c := range newCustomers {
			st.small = append(st.small, c.ID)
		}
	}

	accounts := make([]store.ExternalAccount, n)
	for i := range accounts {
		k := first + i
		owner := st.big
		if k%2 == 1 {
			owner = st.small[((k-1)/2)/10]
		} else {
			st.bigCount++
		}
		currency, info := accountInfo(int64(k))
		canonical, err := json.Marshal(info)
		if err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		accounts[i] = store.ExternalAccount{
			ID: ids.New("ExternalAccount"), CustomerID: owner, PlatformAccountID: "bench-" + strconv.Itoa(k),
			Currency: currency, AccountType: info["accountType"].(string), AccountInfo: canonical,
			Status: "ACTIVE", BeneficiaryVerificationStatus: "UNSUPPORTED",
			Fingerprint: fingerprint(owner, currency, canonical), CreatedAt: now, UpdatedAt: now,
		}
		st.ids = append(st.ids, accounts[i].ID)
	}
	workers := 1
	if s.kind == "postgres" {
		workers = 4
	}
	batches := (n + scaleBatch - 1) / scaleBatch
	return parallel(ctx, batches, workers, func(ctx context.Context, b int) error {
		batch := accounts[b*scaleBatch : min((b+1)*scaleBatch, n)]
		return s.store.Tx(ctx, func(tx store.Tx) error {
			for i := range batch {
				if err := tx.CreateExternalAccount(ctx, &batch[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// spread maps (client, seq) to a well-mixed number (SplitMix64), so that the
// ids a get cell reads are spread over the whole table, the same ones on
// every run.
func spread(client, seq int) uint64 {
	z := uint64(client)<<32 ^ uint64(seq) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

package load

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// Options choose what the scenarios run. The zero value is the full run of
// `make bench` on SQLite only.
type Options struct {
	PostgresURL string        // "" skips PostgreSQL
	TempDir     string        // for SQLite files; the system's when empty
	Duration    time.Duration // per cell; 0 = 2s
	Clients     []int         // service levels; nil = {1,8,64}
	BFFClients  []int         // nil = {1,4,16,64}
	Scales      []int         // nil = {1000,10000,100000}
	// Smoke makes everything tiny (a few requests per cell, two client
	// levels, small scales) for the test that runs in `make test`; the
	// other fields still override its choices when set.
	Smoke bool
	Log   func(format string, args ...any) // progress lines; may be nil
}

// ServiceCell is one measured cell of [RunService]. Op is one of
// "create-external-account", "create-quote", "execute",
// "execute-hot-wallet", "get-transaction".
type ServiceCell struct {
	Store, Op string
	Stats     Stats
	// Txs is how many store transactions of the service ended during the
	// cell (warm-up and background workers included) and TxRetries how
	// many times the store ran one of them again after PostgreSQL aborted
	// it with a serialization failure or deadlock. Always 0 on SQLite.
	Txs, TxRetries int64
	// Connections is how many connections PostgreSQL accepted during the
	// cell (pg_stat_database.sessions, whose counts may lag by up to a
	// second): the service's pool keeps 16 idle connections, so more
	// concurrent transactions than that open and close connections as
	// they go. Always 0 on SQLite.
	Connections int64
}

// ScaleCell is one store size of [RunScale]. Accounts external accounts are
// stored in all; ListCustomerAccounts of them belong to the one customer
// whose first page List reads, the rest are spread over customers with ten
// accounts each. InsertSeconds is the time to insert the Inserted accounts
// (and their customers) that this size added to the previous one.
type ScaleCell struct {
	Store                string
	Accounts             int
	ListCustomerAccounts int
	Inserted             int
	InsertSeconds        float64
	List, Get            Stats
}

// BFFCell compares one operation through the BFF with the same operation
// made directly on the service, at one client count. Op is
// "list-external-accounts" or "login-verify". Added* are ViaBFF minus
// Direct.
type BFFCell struct {
	Op                     string
	Clients                int
	Direct, ViaBFF         Stats
	AddedP50Ms, AddedP99Ms float64
}

// Result gathers the cells of the three scenarios, for the report writer.
type Result struct {
	Service []ServiceCell
	Scale   []ScaleCell
	BFF     []BFFCell
}

// plan is Options with every default applied.
type plan struct {
	pgURL       string
	tempDir     string
	dur         time.Duration
	clients     []int
	bffClients  []int
	scales      []int
	smoke       bool
	scaleClient int // clients of the scale cells
	// cap bounds the measured requests of every cell (0: the duration
	// alone), and loginCap is the number of pending logins prepared for
	// each login-verify cell besides the warm-up's.
	cap, loginCap int
	log           func(format string, args ...any)
}

func (o Options) plan() (plan, error) {
	p := plan{pgURL: o.PostgresURL, tempDir: o.TempDir, dur: o.Duration, smoke: o.Smoke, log: o.Log, scaleClient: 1}
	if p.log == nil {
		p.log = func(string, ...any) {}
	}
	if p.tempDir == "" {
		p.tempDir = os.TempDir()
	}
	if o.Smoke {
		p.clients, p.bffClients, p.scales = []int{1, 3}, []int{1, 3}, []int{60, 200}
		if p.dur == 0 {
			p.dur = 150 * time.Millisecond
		}
		p.cap, p.loginCap = 12, 8
	} else {
		p.clients, p.bffClients, p.scales = []int{1, 8, 64}, []int{1, 4, 16, 64}, []int{1000, 10000, 100000}
		if p.dur == 0 {
			p.dur = 2 * time.Second
		}
		// A login-verify cell uses up one prepared login per request and
		// preparing one costs several requests, so these cells are bounded
		// by count: 250 per side per second of Duration.
		p.loginCap = max(50, int(250*p.dur.Seconds()))
	}
	if o.Clients != nil {
		p.clients = o.Clients
	}
	if o.BFFClients != nil {
		p.bffClients = o.BFFClients
	}
	if o.Scales != nil {
		p.scales = o.Scales
	}
	for _, l := range [][]int{p.clients, p.bffClients, p.scales} {
		if len(l) == 0 || slices.Min(l) < 1 {
			return p, fmt.Errorf("load: client counts and scales must be positive, got %v", l)
		}
	}
	if p.dur < 0 {
		return p, fmt.Errorf("load: negative Duration %v", p.dur)
	}
	p.scales = slices.Sorted(slices.Values(p.scales))
	p.scales = slices.Compact(p.scales)
	return p, nil
}

// stores are the back ends the plan covers.
func (p plan) stores() []string {
	if p.pgURL == "" {
		return []string{"sqlite"}
	}
	return []string{"sqlite", "postgres"}
}

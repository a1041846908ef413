package bffpg_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/service/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// This file is one conformance suite for bff.SessionStore and bff.Limiter,
// run against the in-memory implementations of package bff and against the
// PostgreSQL ones of this package, so that the two provably behave alike.

// clock is a settable clock. It starts on a whole second, so that the
// microsecond resolution of PostgreSQL loses nothing.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// instance is what one BFF process holds.
type instance struct {
	sessions bff.SessionStore
	limiter  bff.Limiter
}

// backend makes two instances sharing one state, as two BFFs behind one
// load balancer; now is their clock (nil: the backend's own).
type backend struct {
	name string
	open func(t *testing.T, now func() time.Time) [2]instance
}

var backends = []backend{
	{"memory", func(_ *testing.T, now func() time.Time) [2]instance {
		// One process's memory is shared only within the process: both
		// "instances" are the same objects.
		in := instance{bff.NewMemoryStore(now), bff.NewMemoryLimiter(now)}
		return [2]instance{in, in}
	}},
	{"postgres", func(t *testing.T, now func() time.Time) [2]instance {
		url := pgtest.Start(t).NewDatabase(t)
		var out [2]instance
		for i := range out {
			st := openStore(t, url, now)
			out[i] = instance{st.Sessions(), st.Limiter()}
		}
		return out
	}},
}

// openStore opens a Store (a pool of its own) closed when t ends; now is
// its clock (nil: the database's).
func openStore(t *testing.T, url string, now func() time.Time, opts ...bffpg.Option) *bffpg.Store {
	t.Helper()
	if now != nil {
		opts = append(opts, bffpg.WithClock(now))
	}
	st, err := bffpg.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// fullSession has every field set; times carry nanoseconds and a zone
// other than UTC.
func fullSession() bff.Session {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	return bff.Session{
		Email:                  "Alice.Smith@Example.com",
		CustomerID:             "Customer:0199a000-0000-7000-8000-000000000001",
		InternalAccountID:      "InternalAccount:0199a000-0000-7000-8000-000000000002",
		PendingCredentialID:    "AuthMethod:0199a000-0000-7000-8000-000000000003",
		PendingRequestID:       "Request:0199a000-0000-7000-8000-000000000004",
		RegistrationChallenge:  "q2Vf-challenge_base64url",
		RegistrationExpiresAt:  time.Date(2025, 10, 13, 17, 35, 1, 123456789, zone),
		WalletSessionID:        "Session:0199a000-0000-7000-8000-000000000005",
		WalletSessionExpiresAt: time.Date(2025, 10, 13, 12, 15, 0, 987654321, time.UTC),
	}
}

// sameSession compares every field of two sessions, times with Equal.
func sameSession(t *testing.T, got, want bff.Session) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		name := g.Type().Field(i).Name
		gf, wf := g.Field(i).Interface(), w.Field(i).Interface()
		if gt, ok := gf.(time.Time); ok {
			if !gt.Equal(wf.(time.Time)) {
				t.Errorf("%s = %v, want %v", name, gt, wf)
			}
			continue
		}
		if !reflect.DeepEqual(gf, wf) {
			t.Errorf("%s = %#v, want %#v", name, gf, wf)
		}
	}
}

func mustPut(t *testing.T, s bff.SessionStore, key string, v bff.Session, ttl time.Duration) {
	t.Helper()
	if err := s.Put(context.Background(), key, v, ttl); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func wantSession(t *testing.T, s bff.SessionStore, key string, want bff.Session) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	sameSession(t, got, want)
}

func wantAbsent(t *testing.T, s bff.SessionStore, key string) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if !errors.Is(err, bff.ErrSessionNotFound) {
		t.Fatalf("Get(%q) = %+v, %v; want ErrSessionNotFound", key, got, err)
	}
}

// key looks like the keys the BFF uses: a hex SHA-256.
func key(n int) string { return fmt.Sprintf("%064x", n) }

func TestSessionStoreConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, in [2]instance, clk *clock)
	}{
		{"fully populated session round trip", func(t *testing.T, in [2]instance, _ *clock) {
			s := fullSession()
			v := reflect.ValueOf(s)
			for i := 0; i < v.NumField(); i++ {
				if v.Field(i).IsZero() {
					t.Fatalf("fullSession leaves %s empty; set it", v.Type().Field(i).Name)
				}
			}
			mustPut(t, in[0].sessions, key(1), s, time.Hour)
			wantSession(t, in[1].sessions, key(1), s)
			wantSession(t, in[0].sessions, key(1), s)
		}},
		{"zero session and zero times round trip", func(t *testing.T, in [2]instance, _ *clock) {
			mustPut(t, in[0].sessions, key(1), bff.Session{}, time.Hour)
			wantSession(t, in[1].sessions, key(1), bff.Session{})
		}},
		{"unusual characters round trip", func(t *testing.T, in [2]instance, _ *clock) {
			s := bff.Session{Email: "nul\x00quote\"back\\slash\u2028émoji😀", CustomerID: `{"not":"json"}`,
				RegistrationChallenge: "\x01\x1f<>&'"}
			mustPut(t, in[0].sessions, key(1), s, time.Hour)
			wantSession(t, in[1].sessions, key(1), s)
		}},
		{"put replaces value and expiry", func(t *testing.T, in [2]instance, clk *clock) {
			a, b := fullSession(), bff.Session{Email: "b@example.com"}
			mustPut(t, in[0].sessions, key(1), a, time.Hour)
			mustPut(t, in[1].sessions, key(1), b, time.Minute)
			wantSession(t, in[0].sessions, key(1), b)
			clk.Advance(time.Minute)
			wantAbsent(t, in[0].sessions, key(1)) // the shorter ttl replaced the longer one
			mustPut(t, in[0].sessions, key(1), a, time.Hour)
			wantSession(t, in[1].sessions, key(1), a) // an expired key can be put again
		}},
		{"delete", func(t *testing.T, in [2]instance, _ *clock) {
			mustPut(t, in[0].sessions, key(1), fullSession(), time.Hour)
			mustPut(t, in[0].sessions, key(2), fullSession(), time.Hour)
			if err := in[1].sessions.Delete(ctx, key(1)); err != nil {
				t.Fatal(err)
			}
			wantAbsent(t, in[0].sessions, key(1))
			wantSession(t, in[0].sessions, key(2), fullSession())
			for _, k := range []string{key(1), key(3)} { // deleted, never there
				if err := in[0].sessions.Delete(ctx, k); err != nil {
					t.Errorf("Delete(%q) of an absent key: %v", k, err)
				}
			}
		}},
		{"absent key", func(t *testing.T, in [2]instance, _ *clock) {
			mustPut(t, in[0].sessions, key(1), fullSession(), time.Hour)
			wantAbsent(t, in[1].sessions, key(2))
			wantAbsent(t, in[1].sessions, "")
		}},
		{"expiry", func(t *testing.T, in [2]instance, clk *clock) {
			mustPut(t, in[0].sessions, key(1), fullSession(), time.Minute)
			mustPut(t, in[0].sessions, key(2), fullSession(), 2*time.Minute)
			clk.Advance(time.Minute - time.Microsecond)
			wantSession(t, in[1].sessions, key(1), fullSession())
			clk.Advance(time.Microsecond) // expired at its expiry time
			wantAbsent(t, in[1].sessions, key(1))
			wantAbsent(t, in[0].sessions, key(1))
			wantSession(t, in[1].sessions, key(2), fullSession())
		}},
		{"sub-microsecond ttl is kept until the next microsecond", func(t *testing.T, in [2]instance, clk *clock) {
			mustPut(t, in[0].sessions, key(1), fullSession(), time.Nanosecond)
			wantSession(t, in[1].sessions, key(1), fullSession())
			clk.Advance(time.Microsecond)
			wantAbsent(t, in[1].sessions, key(1))
		}},
		{"ttl not positive is refused", func(t *testing.T, in [2]instance, _ *clock) {
			mustPut(t, in[0].sessions, key(1), fullSession(), time.Hour)
			for _, ttl := range []time.Duration{0, -time.Nanosecond, -time.Hour} {
				if err := in[0].sessions.Put(ctx, key(1), bff.Session{Email: "x@example.com"}, ttl); err == nil {
					t.Errorf("Put with ttl %v accepted", ttl)
				}
				if err := in[0].sessions.Put(ctx, key(2), bff.Session{}, ttl); err == nil {
					t.Errorf("Put of a new key with ttl %v accepted", ttl)
				}
			}
			wantSession(t, in[1].sessions, key(1), fullSession()) // unchanged
			wantAbsent(t, in[1].sessions, key(2))
		}},
		{"keys are independent", func(t *testing.T, in [2]instance, _ *clock) {
			for i := range 5 {
				mustPut(t, in[i%2].sessions, key(i), bff.Session{Email: fmt.Sprint(i, "@example.com")}, time.Hour)
			}
			for i := range 5 {
				wantSession(t, in[(i+1)%2].sessions, key(i), bff.Session{Email: fmt.Sprint(i, "@example.com")})
			}
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					clk := newClock()
					tc.run(t, b.open(t, clk.Now), clk)
				})
			}
		})
	}
}

func TestLimiterConformance(t *testing.T) {
	t.Parallel()
	type step struct {
		advance  time.Duration
		instance int
		key      string
		limit    bff.Limit
		ok       bool
		wait     time.Duration
	}
	two := bff.Limit{Max: 2, Window: time.Minute}
	cases := []struct {
		name  string
		steps []step
	}{
		{"max allowed, then refused until the window ends", []step{
			{0, 0, "ip:a", two, true, 0},
			{10 * time.Second, 1, "ip:a", two, true, 0},
			{5 * time.Second, 0, "ip:a", two, false, 45 * time.Second},
			{44*time.Second + 999*time.Millisecond, 1, "ip:a", two, false, time.Millisecond},
			{time.Millisecond, 0, "ip:a", two, true, 0}, // the window ends at its end: a new one
			{0, 1, "ip:a", two, true, 0},
			{0, 0, "ip:a", two, false, time.Minute},
		}},
		{"refused attempts do not extend the window", []step{
			{0, 0, "k", two, true, 0},
			{0, 1, "k", two, true, 0},
			{10 * time.Second, 0, "k", two, false, 50 * time.Second},
			{10 * time.Second, 1, "k", two, false, 40 * time.Second},
			{10 * time.Second, 0, "k", two, false, 30 * time.Second},
			{29 * time.Second, 1, "k", two, false, time.Second},
			{time.Second, 0, "k", two, true, 0},
		}},
		{"a new window starts at the first attempt after the end", []step{
			{0, 0, "k", two, true, 0},
			{5 * time.Minute, 1, "k", two, true, 0}, // long after: window from here
			{20 * time.Second, 0, "k", two, true, 0},
			{0, 1, "k", two, false, 40 * time.Second},
		}},
		{"keys are independent", []step{
			{0, 0, "ip:1.2.3.4", two, true, 0},
			{0, 0, "ip:1.2.3.4", two, true, 0},
			{0, 1, "ip:1.2.3.4", two, false, time.Minute},
			{0, 1, "email:a@example.com", two, true, 0},
			{30 * time.Second, 0, "ip:5.6.7.8", two, true, 0},
			{0, 1, "email:a@example.com", two, true, 0},
			{0, 0, "email:a@example.com", two, false, time.Minute - 30*time.Second},
			{0, 0, "ip:1.2.3.4", two, false, 30 * time.Second},
		}},
		{"max one", []step{
			{0, 0, "k", bff.Limit{Max: 1, Window: time.Hour}, true, 0},
			{time.Minute, 1, "k", bff.Limit{Max: 1, Window: time.Hour}, false, 59 * time.Minute},
		}},
		{"the limit of each call counts", []step{
			{0, 0, "k", bff.Limit{Max: 1, Window: time.Minute}, true, 0},
			{0, 1, "k", bff.Limit{Max: 1, Window: time.Minute}, false, time.Minute},
			{0, 0, "k", bff.Limit{Max: 3, Window: time.Hour}, true, 0}, // the window keeps its end
			{0, 1, "k", bff.Limit{Max: 3, Window: time.Hour}, true, 0},
			{0, 0, "k", bff.Limit{Max: 3, Window: time.Hour}, false, time.Minute},
		}},
		{"max zero allows nothing and records nothing", []step{
			{0, 0, "k", bff.Limit{Max: 0, Window: time.Minute}, false, time.Minute},
			{0, 1, "k", two, true, 0},
			{10 * time.Second, 0, "k", bff.Limit{Max: 0, Window: time.Hour}, false, 50 * time.Second},
			{0, 1, "k", two, true, 0},
			{50 * time.Second, 0, "k", bff.Limit{Max: 0, Window: time.Hour}, false, time.Hour},
			{0, 1, "k", two, true, 0},
		}},
		{"a zero window allows every attempt", []step{
			{0, 0, "k", bff.Limit{Max: 1, Window: 0}, true, 0},
			{0, 1, "k", bff.Limit{Max: 1, Window: 0}, true, 0},
			{time.Second, 0, "k", bff.Limit{Max: 1, Window: 0}, true, 0},
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					clk := newClock()
					in := b.open(t, clk.Now)
					for i, s := range tc.steps {
						clk.Advance(s.advance)
						ok, wait, err := in[s.instance].limiter.Allow(context.Background(), s.key, s.limit)
						if err != nil || ok != s.ok || wait != s.wait {
							t.Errorf("step %d (%s on instance %d): Allow = %v, %v, %v; want %v, %v",
								i, s.key, s.instance, ok, wait, err, s.ok, s.wait)
						}
					}
				})
			}
		})
	}
}

// TestLimiterConcurrent hammers one key from 32 goroutines spread over two
// instances (for PostgreSQL: two pools, as two BFFs would have) on the
// backend's own clock: exactly Max attempts are allowed.
func TestLimiterConcurrent(t *testing.T) {
	t.Parallel()
	const goroutines, attempts = 32, 8
	l := bff.Limit{Max: 37, Window: time.Hour}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			in := b.open(t, nil)
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				allowed int
				errs    []error
			)
			start := make(chan struct{})
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for range attempts {
						ok, wait, err := in[g%2].limiter.Allow(context.Background(), "email:hammer@example.com", l)
						mu.Lock()
						switch {
						case err != nil:
							errs = append(errs, err)
						case ok:
							allowed++
						case wait <= 0 || wait > l.Window:
							errs = append(errs, fmt.Errorf("refused with wait %v", wait))
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d errors, first: %v", len(errs), errs[0])
			}
			if allowed != l.Max {
				t.Errorf("%d of %d attempts allowed, want exactly %d", allowed, goroutines*attempts, l.Max)
			}
		})
	}
}

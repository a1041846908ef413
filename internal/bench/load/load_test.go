package load

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"paywallet/service/store/pgtest"
)

func TestMain(m *testing.M) {
	ServeReceiverIfAsked() // RunEvents' webhook receiver is this test binary again
	pgtest.Main(m)
}

// TestSmoke runs the three scenarios with tiny settings on SQLite and
// PostgreSQL and checks that every cell made requests and that every
// request (and every check after it) got the answer it should. It asserts
// no timings.
func TestSmoke(t *testing.T) {
	ctx := context.Background()
	o := Options{
		PostgresURL: pgtest.Start(t).NewDatabase(t),
		TempDir:     t.TempDir(),
		Smoke:       true,
		Log:         t.Logf,
	}
	check := func(what string, st Stats) {
		t.Helper()
		if st.Requests == 0 || st.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors (first: %s)", what, st.Requests, st.Errors, st.FirstError)
		}
	}

	svc, err := RunService(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 2 * len(serviceOps); len(svc) != want { // stores × client levels × ops
		t.Errorf("%d service cells, want %d", len(svc), want)
	}
	for _, c := range svc {
		check(c.Store+" "+c.Op, c.Stats)
	}

	scale, err := RunScale(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(scale) != 4 {
		t.Errorf("%d scale cells, want 4", len(scale))
	}
	for _, c := range scale {
		check(c.Store+" list", c.List)
		check(c.Store+" get", c.Get)
		if c.Accounts == 0 || c.ListCustomerAccounts != c.Accounts/2 {
			t.Errorf("%s: %d accounts, %d of the listed customer", c.Store, c.Accounts, c.ListCustomerAccounts)
		}
	}

	cells, err := RunBFF(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Errorf("%d BFF cells, want 4", len(cells))
	}
	for _, c := range cells {
		check(c.Op+" direct", c.Direct)
		check(c.Op+" via BFF", c.ViaBFF)
	}
}

// TestRun checks the generator's bookkeeping with an op that needs no
// server: warm-up calls are not measured, maxRequests bounds the measured
// calls, (client, seq) never repeats, errors are counted and ErrStop ends
// a client without counting.
// TestEventsSmoke runs RunEvents tiny on both stores: every call answers
// as it should, the receiver hears the "on" side's webhooks, and every
// payment's event reaches the BFF's event stream.
func TestEventsSmoke(t *testing.T) {
	o := Options{PostgresURL: pgtest.Start(t).NewDatabase(t), TempDir: t.TempDir(), Smoke: true, Log: t.Logf}
	r, err := RunEvents(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Throughput) != 4 {
		t.Fatalf("%d throughput cells, want 4 (SQLite, PostgreSQL; delivered, outbox)", len(r.Throughput))
	}
	for _, c := range r.Throughput {
		for side, st := range map[string]Stats{"off": c.Off, "on": c.On} {
			if st.Requests == 0 || st.Errors != 0 {
				t.Errorf("%s %s %s: %d requests, %d errors (first: %s)", c.Store, c.Measure, side, st.Requests, st.Errors, st.FirstError)
			}
		}
		// With the workers stopped nothing is sent: the cell measures
		// the outbox alone.
		if delivers := c.Measure == MeasureDelivered; (c.Delivered > 0) != delivers || c.Ratio <= 0 {
			t.Errorf("%s %s: %d delivered, ratio %v", c.Store, c.Measure, c.Delivered, c.Ratio)
		}
	}
	if l := r.Latency; l == nil || l.Missing != 0 || l.Events < l.Executes || l.P50Ms <= 0 || l.P99Ms < l.P50Ms {
		t.Errorf("latency %+v", l)
	}
}

func TestRun(t *testing.T) {
	var mu sync.Mutex
	seen := map[[2]int]bool{}
	boom := errors.New("boom")
	st := Run(context.Background(), 4, time.Minute, 100, func(_ context.Context, client, seq int) error {
		mu.Lock()
		defer mu.Unlock()
		k := [2]int{client, seq}
		if seen[k] {
			t.Errorf("call %v made twice", k)
		}
		seen[k] = true
		switch {
		case client == 3 && seq == 1: // during the warm-up
			return ErrStop
		case seq%10 == 9:
			return boom
		}
		return nil
	})
	if st.Requests != 100 || st.Clients != 4 {
		t.Fatalf("requests %d, clients %d", st.Requests, st.Clients)
	}
	if len(seen) != 100+3*WarmupCalls+2 { // client 3 stopped at its second call
		t.Fatalf("%d calls", len(seen))
	}
	if st.Errors == 0 || st.FirstError != "boom" || st.RPS <= 0 {
		t.Fatalf("%+v", st)
	}

	st = Run(context.Background(), 2, 20*time.Millisecond, 0, func(context.Context, int, int) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	if st.Requests == 0 || st.Errors != 0 || st.P50Ms <= 0 || st.P50Ms > st.P99Ms || st.P99Ms > st.MaxMs {
		t.Fatalf("%+v", st)
	}
}

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 200; i++ {
		s = append(s, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 100}, {90, 180}, {99, 198}, {100, 200}, {0.1, 1}} {
		if got := percentile(s, c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 || percentile(s[:1], 99) != 1 {
		t.Error("edge cases")
	}
}

package bff

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMemoryLimiter(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Unix(1_760_000_000, 0)}
	m := NewMemoryLimiter(clk.Now)
	ctx := context.Background()
	l := Limit{Max: 2, Window: time.Minute}
	type step struct {
		advance time.Duration
		key     string
		ok      bool
		wait    time.Duration
	}
	steps := []step{
		{0, "a", true, 0},
		{10 * time.Second, "a", true, 0},
		{5 * time.Second, "a", false, 45 * time.Second},
		{0, "b", true, 0}, // keys are independent
		{44 * time.Second, "a", false, time.Second},
		{time.Second, "a", true, 0}, // a new window
		{0, "a", true, 0},
		{0, "a", false, time.Minute},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		ok, wait, err := m.Allow(ctx, s.key, l)
		if err != nil || ok != s.ok || wait != s.wait {
			t.Errorf("step %d (%s): Allow = %v, %v, %v; want %v, %v", i, s.key, ok, wait, err, s.ok, s.wait)
		}
	}

	// Ended windows are swept, so keys do not pile up.
	for i := 0; i < 3000; i++ {
		_, _, _ = m.Allow(ctx, fmt.Sprint("old", i), l)
	}
	clk.Advance(2 * time.Minute)
	for i := 0; i < 1100; i++ {
		_, _, _ = m.Allow(ctx, "new", l)
	}
	if n := m.Len(); n > 100 {
		t.Errorf("%d keys kept after their windows ended", n)
	}
}

func TestMemoryLimiterConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMemoryLimiter(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, _ := m.Allow(context.Background(), "k", Limit{Max: 7, Window: time.Hour})
			if ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 7 {
		t.Errorf("%d allowed, want 7", allowed)
	}
}

// TestLoginStartIsThrottled checks both limits of POST /api/login/start:
// per client address and per e-mail address (in any case), with defaults
// when Config leaves them zero.
func TestLoginStartIsThrottled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		cfg       func(*Config)
		emails    func(i int) string
		allowed   int
		window    time.Duration
		retryFrom int // Retry-After of the first refusal
	}{
		{
			name:      "per IP, defaults",
			emails:    func(i int) string { return fmt.Sprintf("ip%d@example.com", i) },
			allowed:   10,
			window:    time.Minute,
			retryFrom: 60,
		},
		{
			name:      "per e-mail, defaults, case-insensitive",
			emails:    func(i int) string { return []string{"Same@example.com", "same@EXAMPLE.com"}[i%2] },
			allowed:   5,
			window:    10 * time.Minute,
			retryFrom: 600,
		},
		{
			name:      "per IP, configured",
			cfg:       func(c *Config) { c.LoginPerIP = Limit{Max: 3, Window: 30 * time.Second} },
			emails:    func(i int) string { return fmt.Sprintf("cfg%d@example.com", i) },
			allowed:   3,
			window:    30 * time.Second,
			retryFrom: 30,
		},
		{
			name:      "per e-mail, configured",
			cfg:       func(c *Config) { c.LoginPerEmail = Limit{Max: 1, Window: time.Hour} },
			emails:    func(int) string { return "once@example.com" },
			allowed:   1,
			window:    time.Hour,
			retryFrom: 3600,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []func(*Config)
			if tc.cfg != nil {
				opts = append(opts, tc.cfg)
			}
			h := newHarness(t, opts...)
			start := func(i int) *response {
				return h.do("POST", "/api/login/start", `{"email":"`+tc.emails(i)+`"}`, nil)
			}
			for i := 0; i < tc.allowed; i++ {
				if r := start(i); r.status != 200 {
					t.Fatalf("start %d: %d %s", i, r.status, r.body)
				}
			}
			h.svc.reset()
			r := start(tc.allowed)
			if r.status != 429 || r.code(t) != "RATE_LIMITED" {
				t.Fatalf("start %d: %d %s, want 429 RATE_LIMITED", tc.allowed, r.status, r.body)
			}
			if got := r.header.Get("Retry-After"); got != fmt.Sprint(tc.retryFrom) {
				t.Errorf("Retry-After %q, want %d", got, tc.retryFrom)
			}
			if d, _ := r.json(t)["details"].(map[string]any); d["retryAfter"] != float64(tc.retryFrom) || d["reason"] != "TOO_MANY_SIGN_IN_ATTEMPTS" {
				t.Errorf("details %v", d)
			}
			if n := len(h.svc.reqs()); n != 0 {
				t.Errorf("a refused start reached the service %d times", n)
			}
			// Malformed requests cost the service nothing and are not counted.
			if r := h.do("POST", "/api/login/start", `{"email":"nope"}`, nil); r.status != 400 {
				t.Errorf("malformed start while throttled: %d", r.status)
			}

			h.clock.Advance(tc.window - time.Second)
			if r := start(tc.allowed + 1); r.status != 429 || r.header.Get("Retry-After") != "1" {
				t.Errorf("a second before the window ends: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
			}
			h.clock.Advance(time.Second)
			if r := start(tc.allowed + 2); r.status != 200 {
				t.Errorf("after the window: %d %s", r.status, r.body)
			}
		})
	}
}

// TestLimiterIsPluggable: a Config.Limiter is used, and its failure refuses
// the start rather than letting it through unthrottled.
func TestLimiterIsPluggable(t *testing.T) {
	t.Parallel()
	fl := &failingLimiter{}
	h := newHarness(t, func(c *Config) { c.Limiter = fl })
	r := h.do("POST", "/api/login/start", `{"email":"Pluggable@Example.com"}`, nil)
	if r.status != 500 || r.code(t) != "INTERNAL_ERROR" {
		t.Errorf("%d %s, want 500", r.status, r.body)
	}
	if len(h.svc.reqs()) != 0 {
		t.Error("reached the service")
	}
	if got := strings.Join(fl.keys, " "); !strings.Contains(got, "email:pluggable@example.com") {
		t.Errorf("keys %q", got)
	}
}

type failingLimiter struct {
	mu   sync.Mutex
	keys []string
}

func (f *failingLimiter) Allow(_ context.Context, key string, _ Limit) (bool, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	if strings.HasPrefix(key, "email:") {
		return false, 0, fmt.Errorf("store down")
	}
	return true, 0, nil
}

// TestLoginLimitBehindProxy: the per-address limit counts the client that
// a trusted proxy names, and only then; the part of X-Forwarded-For that a
// client can write itself is not believed.
func TestLoginLimitBehindProxy(t *testing.T) {
	t.Parallel()
	one := func(c *Config) { c.LoginPerIP = Limit{Max: 1, Window: time.Minute} }
	start := func(h *harness, email, xff string) int {
		return h.do("POST", "/api/login/start", `{"email":"`+email+`"}`, map[string]string{"X-Forwarded-For": xff}).status
	}

	// App.Test connections come from 0.0.0.0: make that a trusted proxy.
	h := newHarness(t, one, func(c *Config) { c.TrustedProxies = []string{"0.0.0.0", "10.0.0.0/8"} })
	for _, tc := range []struct {
		email, xff string
		want       int
	}{
		{"p1@example.com", "198.51.100.1", 200},
		{"p2@example.com", "198.51.100.2", 200},              // another client
		{"p3@example.com", "198.51.100.1, 10.1.2.3", 429},    // through a second trusted hop
		{"p4@example.com", "203.0.113.9, 198.51.100.2", 429}, // a forged left part changes nothing
	} {
		if got := start(h, tc.email, tc.xff); got != tc.want {
			t.Errorf("X-Forwarded-For %q: %d, want %d", tc.xff, got, tc.want)
		}
	}

	// Without a trusted proxy, X-Forwarded-For is the client's own say.
	h = newHarness(t, one)
	if got := start(h, "d1@example.com", "198.51.100.1"); got != 200 {
		t.Errorf("first start: %d", got)
	}
	if got := start(h, "d2@example.com", "198.51.100.2"); got != 429 {
		t.Errorf("a forged X-Forwarded-For bought another start: %d", got)
	}
}

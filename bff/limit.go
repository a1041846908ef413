package bff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Limit is a number of attempts allowed per window of time.
type Limit struct {
	Max    int
	Window time.Duration
}

// Defaults of Config.LoginPerIP and Config.LoginPerEmail. A person signs in
// a few times a day; a whole office behind one address still fits in ten a
// minute. Five codes in ten minutes is more than anyone waiting for an
// e-mail asks for (the service also allows one code per 30 s).
var (
	defaultLoginPerIP    = Limit{Max: 10, Window: time.Minute}
	defaultLoginPerEmail = Limit{Max: 5, Window: 10 * time.Minute}
)

// orDefault fills the zero fields of l from def and refuses negative ones.
func (l Limit) orDefault(def Limit) (Limit, error) {
	if l.Max < 0 || l.Window < 0 {
		return l, errors.New("Max and Window must not be negative")
	}
	if l.Max == 0 {
		l.Max = def.Max
	}
	if l.Window == 0 {
		l.Window = def.Window
	}
	return l, nil
}

// Limiter counts attempts per key in fixed windows. [MemoryLimiter] is the
// default; an implementation on a shared store (PostgreSQL, Redis) lets
// several BFF instances enforce one limit. Implementations must be safe for
// concurrent use.
type Limiter interface {
	// Allow counts one attempt under key against l. When the attempt is over
	// the limit, ok is false and wait is how long until the key's window
	// ends. An error means the count is unknown; the BFF then refuses.
	Allow(ctx context.Context, key string, l Limit) (ok bool, wait time.Duration, err error)
}

// MemoryLimiter is a Limiter in process memory: each key's window starts at
// its first attempt and lasts l.Window.
type MemoryLimiter struct {
	now func() time.Time

	mu    sync.Mutex
	m     map[string]window
	calls int
}

type window struct {
	n   int
	end time.Time
}

// NewMemoryLimiter returns an empty MemoryLimiter; now is its clock
// (time.Now when nil).
func NewMemoryLimiter(now func() time.Time) *MemoryLimiter {
	if now == nil {
		now = time.Now
	}
	return &MemoryLimiter{now: now, m: make(map[string]window)}
}

// Allow implements Limiter. Every 1024th call also drops the keys whose
// window has ended, so memory follows the keys seen in one window.
func (m *MemoryLimiter) Allow(_ context.Context, key string, l Limit) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// The clock is read under the lock: read before it, a call that waited
	// for the lock would measure against a window a later call opened,
	// and answer a wait longer than the window (TestLimiterConcurrent saw
	// 1h0m0.000065s of a one-hour window).
	now := m.now()
	m.calls++
	if m.calls%1024 == 0 {
		for k, w := range m.m {
			if !now.Before(w.end) {
				delete(m.m, k)
			}
		}
	}
	w, ok := m.m[key]
	if !ok || !now.Before(w.end) {
		w = window{end: now.Add(l.Window)}
	}
	if w.n >= l.Max {
		return false, w.end.Sub(now), nil
	}
	w.n++
	m.m[key] = w
	return true, 0, nil
}

// Len returns the number of keys held, ended windows included until swept.
func (m *MemoryLimiter) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

var _ Limiter = (*MemoryLimiter)(nil)

// reasonTooManySignIns is details.reason of the login limiter's 429
// RATE_LIMITED, beside the service's own reasons (CODE_RECENTLY_SENT,
// CREDENTIAL_LOCKED, CHALLENGE_RECENTLY_ISSUED) that the BFF passes on, so
// that the page can tell a person which wait it is.
const reasonTooManySignIns = "TOO_MANY_SIGN_IN_ATTEMPTS"

// throttleLogin counts one login start against the per-address and the
// per-e-mail limits, in that order, and returns the 429 answer when either
// is exhausted.
func (s *Server) throttleLogin(c *fiber.Ctx, email string) error {
	for _, check := range []struct {
		key   string
		limit Limit
	}{
		{"ip:" + s.clientIP(c), s.perIP},
		{"email:" + strings.ToLower(email), s.perEmail},
	} {
		ok, wait, err := s.limiter.Allow(c.UserContext(), check.key, check.limit)
		if err != nil {
			return s.storeFailed(c.UserContext(), "login limiter", err)
		}
		if !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			return &Error{Status: http.StatusTooManyRequests, Code: codeRateLimited,
				Message:    fmt.Sprintf("too many sign-in attempts; try again in %d seconds", secs),
				Details:    map[string]any{"reason": reasonTooManySignIns, "retryAfter": secs},
				RetryAfter: secs}
		}
	}
	return nil
}

// clientIP is the address of the peer, or, when the peer is a trusted
// proxy, the nearest address in X-Forwarded-For that is not a trusted proxy
// (read from the right: the left part is whatever the client sent).
func (s *Server) clientIP(c *fiber.Ctx) string {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer.String()
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if a = a.Unmap(); !s.trusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseProxies reads Config.TrustedProxies: IP addresses and CIDR ranges.
func parseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range list {
		if strings.Contains(v, "/") {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range", v)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

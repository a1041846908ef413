package bffpg_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/service/store/pgtest"
	"paywallet/shared/wire"
)

func signIns(t *testing.T, in instance) bff.SignInStore {
	t.Helper()
	si, ok := in.sessions.(bff.SignInStore)
	if !ok {
		t.Fatalf("%T is not a bff.SignInStore", in.sessions)
	}
	return si
}

func mustPutSignIn(t *testing.T, s bff.SignInStore, id string, si bff.SignIn, ttl time.Duration) {
	t.Helper()
	if err := s.PutSignIn(context.Background(), id, si, ttl); err != nil {
		t.Fatalf("PutSignIn(%q): %v", id, err)
	}
}

// wantSignIns checks what SignIns returns for the ids, every one of them
// asked for at once.
func wantSignIns(t *testing.T, s bff.SignInStore, ids []string, want map[string]bff.SignIn) {
	t.Helper()
	got, err := s.SignIns(context.Background(), ids)
	if err != nil {
		t.Fatalf("SignIns: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("SignIns(%q) = %v, want %v", ids, got, want)
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || g.UserAgent != w.UserAgent || !g.At.Equal(w.At) {
			t.Errorf("SignIns[%q] = %+v (present %v), want %+v", id, g, ok, w)
		}
	}
}

const chromeMac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// TestSignInStoreConformance runs the same cases against the in-memory
// bff.MemoryStore and the PostgreSQL store, as TestSessionStoreConformance.
func TestSignInStoreConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := func(n int) string { return fmt.Sprintf("Session:0199a000-0000-7000-8000-%012d", n) }
	at := time.Date(2025, 10, 13, 11, 58, 7, 123456000, time.UTC)
	cases := []struct {
		name string
		run  func(t *testing.T, a, b bff.SignInStore, clk *clock)
	}{
		{"round trip between instances", func(t *testing.T, a, b bff.SignInStore, _ *clock) {
			mustPutSignIn(t, a, ws(1), bff.SignIn{UserAgent: chromeMac, At: at}, time.Hour)
			wantSignIns(t, b, []string{ws(1), ws(2)}, map[string]bff.SignIn{ws(1): {UserAgent: chromeMac, At: at}})
		}},
		{"no ids, no rows", func(t *testing.T, a, b bff.SignInStore, _ *clock) {
			mustPutSignIn(t, a, ws(1), bff.SignIn{UserAgent: chromeMac, At: at}, time.Hour)
			wantSignIns(t, b, nil, map[string]bff.SignIn{})
		}},
		{"the cap and the character set hold in the store", func(t *testing.T, a, b bff.SignInStore, _ *clock) {
			long := strings.Repeat("A", 3*bff.MaxUserAgent)
			mustPutSignIn(t, a, ws(1), bff.SignIn{UserAgent: long, At: at}, time.Hour)
			mustPutSignIn(t, a, ws(2), bff.SignIn{UserAgent: "nul\x00é😀\r\nok", At: at}, time.Hour)
			wantSignIns(t, b, []string{ws(1), ws(2)}, map[string]bff.SignIn{
				ws(1): {UserAgent: long[:bff.MaxUserAgent], At: at},
				ws(2): {UserAgent: "nulok", At: at},
			})
		}},
		{"put replaces, delete removes", func(t *testing.T, a, b bff.SignInStore, _ *clock) {
			mustPutSignIn(t, a, ws(1), bff.SignIn{UserAgent: "one", At: at}, time.Hour)
			mustPutSignIn(t, b, ws(1), bff.SignIn{UserAgent: "two", At: at.Add(time.Second)}, time.Hour)
			mustPutSignIn(t, b, ws(2), bff.SignIn{UserAgent: "three", At: at}, time.Hour)
			wantSignIns(t, a, []string{ws(1)}, map[string]bff.SignIn{ws(1): {UserAgent: "two", At: at.Add(time.Second)}})
			if err := b.DeleteSignIn(ctx, ws(1)); err != nil {
				t.Fatal(err)
			}
			if err := b.DeleteSignIn(ctx, ws(9)); err != nil {
				t.Errorf("deleting an absent sign-in: %v", err)
			}
			wantSignIns(t, a, []string{ws(1), ws(2)}, map[string]bff.SignIn{ws(2): {UserAgent: "three", At: at}})
		}},
		{"expiry", func(t *testing.T, a, b bff.SignInStore, clk *clock) {
			mustPutSignIn(t, a, ws(1), bff.SignIn{UserAgent: "short", At: at}, time.Minute)
			mustPutSignIn(t, a, ws(2), bff.SignIn{UserAgent: "long", At: at}, time.Hour)
			clk.Advance(time.Minute)
			wantSignIns(t, b, []string{ws(1), ws(2)}, map[string]bff.SignIn{ws(2): {UserAgent: "long", At: at}})
		}},
		{"ttl not positive is refused", func(t *testing.T, a, b bff.SignInStore, _ *clock) {
			for _, ttl := range []time.Duration{0, -time.Second} {
				if err := a.PutSignIn(ctx, ws(1), bff.SignIn{UserAgent: "x", At: at}, ttl); err == nil {
					t.Errorf("PutSignIn with ttl %v accepted", ttl)
				}
			}
			wantSignIns(t, b, []string{ws(1)}, map[string]bff.SignIn{})
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					clk := newClock()
					in := be.open(t, clk.Now)
					tc.run(t, signIns(t, in[0]), signIns(t, in[1]), clk)
				})
			}
		})
	}
}

// TestSweepSignIns: the sweep deletes the sign-ins of ended wallet
// sessions and keeps the live ones.
func TestSweepSignIns(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	clk := newClock()
	st := openStore(t, url, clk.Now, bffpg.WithSweepInterval(-1))
	ss := st.Sessions()
	mustPutSignIn(t, ss, "Session:ended", bff.SignIn{UserAgent: "a", At: clk.Now()}, time.Minute)
	mustPutSignIn(t, ss, "Session:live", bff.SignIn{UserAgent: "b", At: clk.Now()}, time.Hour)
	clk.Advance(2 * time.Minute)
	if _, _, err := st.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, url, "bff_sign_ins"); n != 1 {
		t.Errorf("%d sign-in rows left, want 1", n)
	}
}

// TestTwoServersShareDevices: a browser signs in through instance A; the
// session list asked of instance B names its device.
func TestTwoServersShareDevices(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	svc := httptest.NewServer(&upstream{})
	t.Cleanup(svc.Close)
	var srv [2]*bff.Server
	for i := range srv {
		st := openStore(t, url, nil)
		s, err := bff.New(bff.Config{
			ServiceURL:         svc.URL + wire.BasePath,
			PlatformCredential: "tok_two:secret",
			Mode:               bff.ModeSandbox,
			OTPSignerPublicKey: "02" + strings.Repeat("ab", 32),
			Logger:             slog.New(slog.DiscardHandler),
			Sessions:           st.Sessions(),
			Limiter:            st.Limiter(),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv[i] = s
	}
	ua := map[string]string{"User-Agent": chromeMac}
	r := callWith(t, srv[0], "POST", "/api/login/start", "", `{"email":"`+userEmail+`"}`, ua)
	if r.status != 200 {
		t.Fatalf("start on A: %d %s", r.status, r.body)
	}
	r = callWith(t, srv[0], "POST", "/api/login/verify", r.cookie, `{"encryptedOtpBundle":"sealed"}`, ua)
	if r.status != 200 {
		t.Fatalf("verify on A: %d %s", r.status, r.body)
	}
	list := call(t, srv[1], "GET", "/api/auth/sessions", r.cookie, "")
	want := `"device":{"browser":"Chrome 131","os":"macOS","label":"Chrome on macOS"}}`
	if list.status != 200 || !strings.Contains(list.body, want) {
		t.Errorf("sessions on B: %d %s; want a device %s", list.status, list.body, want)
	}
}

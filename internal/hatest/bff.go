package hatest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"paywallet/internal/bffclient"
	"paywallet/shared/wire"
)

// bffs are the two wallet binaries run as BFFs only (--service-url, the
// balancer in front of the service instances; --sessions-database on the
// cluster), and the load the round puts on them.
type bffs struct {
	bin, dir, database, signerKey string
	n                             int       // how many BFFs
	webhooks                      *balancer // in front of the BFFs, for the services' webhooks
	emails                        []string  // the soak's customers, who sign in
	logf                          func(string, ...any)

	mu     sync.Mutex
	counts map[string]map[int]int64 // kind → status → answers (0: no answer)
	events int64                    // SSE events received
	bad    []string                 // answers that are neither good nor 503
}

// bffKinds are the requests the load sends, for the figures.
var bffKinds = []string{"login-start", "me", "events"}

func (b *bffs) count(kind string, status int, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts == nil {
		b.counts = map[string]map[int]int64{}
	}
	if b.counts[kind] == nil {
		b.counts[kind] = map[int]int64{}
	}
	b.counts[kind][status]++
	if (status >= 500 && status != http.StatusServiceUnavailable) || status == 0 {
		if len(b.bad) < 20 {
			b.bad = append(b.bad, fmt.Sprintf("%s %s: %d %s", time.Now().Format("15:04:05.000"), kind, status, what))
		}
	}
}

// run starts the BFFs, signs the customers in, sends the load until ctx
// ends, stops the BFFs, and answers an error naming every answer that was
// a 5xx other than 503 or none at all.
func (b *bffs) run(ctx context.Context, services []string) error {
	lb, err := newBalancer(services)
	if err != nil {
		return err
	}
	defer lb.Close()
	var procs []*bffProc
	var bases []string
	defer func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(15 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
	}()
	for i := range b.n {
		p, base, err := b.start(ctx, i, freePort(), lb.URL())
		if err != nil {
			return err
		}
		procs, bases = append(procs, p), append(bases, base)
	}
	b.webhooks.setBackends(bases)
	defer b.webhooks.setBackends(nil)

	// Sign the customers in, each through one BFF; their streams and
	// session look-ups go through the other too (the sessions are shared).
	var users []*bffclient.Client
	for i, email := range b.emails {
		c := &bffclient.Client{Base: bases[i%len(bases)]}
		if _, _, err := c.LoginEmailOTP(ctx, email, func(email string) (string, error) { return mailboxCode(ctx, services, email) }); err != nil {
			b.logf("BFF sign-in of %s failed (its streams are left out): %v", email, err)
			continue
		}
		users = append(users, c)
	}
	b.logf("BFFs up at %s, %d customers signed in", strings.Join(bases, " "), len(users))

	var wg sync.WaitGroup
	// Login starts: each hits the shared rate limiter (bffpg) and the
	// service (an OTP).
	wg.Go(func() {
		rnd := rand.New(rand.NewPCG(1, 2))
		for n := 0; ctx.Err() == nil; n++ {
			c := &bffclient.Client{Base: bases[n%len(bases)]}
			r, err := c.Do(ctx, "POST", "/api/login/start", map[string]string{"email": fmt.Sprintf("ha-%d-%d@ha.example.com", rnd.IntN(1000), n)}, nil)
			b.answer(ctx, "login-start", r, err)
			pause(ctx, 100*time.Millisecond)
		}
	})
	for _, u := range users {
		for j, base := range bases {
			other := &bffclient.Client{Base: base}
			other.SetCookie(u.Cookie())
			// Session look-ups through both BFFs (the session is in bffpg).
			if j == 0 {
				wg.Go(func() {
					for n := 0; ctx.Err() == nil; n++ {
						c := &bffclient.Client{Base: bases[n%len(bases)]}
						c.SetCookie(u.Cookie())
						r, err := c.Do(ctx, "GET", "/api/me", nil, nil)
						b.answer(ctx, "me", r, err)
						pause(ctx, 150*time.Millisecond)
					}
				})
			}
			// An event stream on each BFF, opened again whenever it ends.
			wg.Go(func() { b.stream(ctx, other) })
		}
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.bad) > 0 {
		return fmt.Errorf("the BFFs answered other than good or 503 (first %d): %s", len(b.bad), strings.Join(b.bad, "; "))
	}
	return nil
}

func (b *bffs) answer(ctx context.Context, kind string, r bffclient.Response, err error) {
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		b.count(kind, 0, err.Error())
	default:
		b.count(kind, r.Status, clip(string(r.Body)))
	}
}

// stream holds an event stream open and counts its events; when it ends
// (or cannot be opened) it is opened again, as EventSource does.
func (b *bffs) stream(ctx context.Context, c *bffclient.Client) {
	hc := &http.Client{}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", c.Base+"/api/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Cookie", c.Cookie())
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				b.count("events", 0, err.Error())
			}
			pause(ctx, 500*time.Millisecond)
			continue
		}
		b.count("events", resp.StatusCode, "")
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event:") {
				b.mu.Lock()
				b.events++
				b.mu.Unlock()
			}
		}
		resp.Body.Close()
		pause(ctx, 200*time.Millisecond)
	}
}

// bffProc is a running wallet process; done is closed when it has exited.
type bffProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs BFF i and waits until it answers /api/config (a BFF's own
// route: a port taken meanwhile by another server is not mistaken for it).
func (b *bffs) start(ctx context.Context, i, port int, service string) (*bffProc, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logs, err := os.Create(filepath.Join(b.dir, fmt.Sprintf("wallet-%d.log", i+1)))
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(b.bin, "--listen", addr, "--service-url", service+wire.BasePath, "--otp-signer-public-key", b.signerKey,
		"--sessions-database", b.database, "--mode", "sandbox", "--log-level", "warn")
	cmd.Env = append(envFor(b.dir), "WALLET_SERVICE_URL=", "WALLET_DATABASE=")
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logs.Close()
		return nil, "", err
	}
	p := &bffProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logs.Close(); close(p.done) }()
	base := "http://" + addr
	for deadline := time.Now().Add(time.Minute); ; {
		cfg, err := (&bffclient.Client{Base: base}).Config(ctx)
		if err == nil && cfg.OTPSignerPublicKey == b.signerKey {
			return p, base, nil
		}
		select {
		case <-p.done:
			return nil, "", fmt.Errorf("wallet %d exited during start (%v); log: %s", i+1, cmd.ProcessState, logs.Name())
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = cmd.Process.Kill()
			<-p.done
			return nil, "", fmt.Errorf("wallet %d did not come up: %v", i+1, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// figures are the BFF load's answers by kind and status.
func (b *bffs) figures() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var parts []string
	for _, kind := range bffKinds {
		var st []string
		var codes []int
		for code := range b.counts[kind] {
			codes = append(codes, code)
		}
		sort.Ints(codes)
		for _, code := range codes {
			label := strconv.Itoa(code)
			if code == 0 {
				label = "no answer"
			}
			st = append(st, fmt.Sprintf("%s×%d", label, b.counts[kind][code]))
		}
		parts = append(parts, fmt.Sprintf("%s %s", kind, strings.Join(st, " ")))
	}
	return fmt.Sprintf("%s; SSE events received %d", strings.Join(parts, "; "), b.events)
}

// mailboxCode reads the newest code for email from the instances' dev
// mailboxes (each instance keeps its own, in memory).
func mailboxCode(ctx context.Context, services []string, email string) (string, error) {
	var errs []error
	for _, s := range services {
		code, err := (&bffclient.Client{Base: s}).MailboxCode(ctx, email)
		if err == nil {
			return code, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asPaymentsd, set to 1 in its environment, makes the test binary run
// main (TestMain): the process tests' paymentsd.
const asPaymentsd = "PAYMENTSD_TEST_AS_MAIN"

// TestSIGTERMDrains runs paymentsd as a process with metrics on, scrapes
// them, and stops it with SIGTERM while a request is in flight: /readyz
// answers 503 draining during --drain-delay, the server then stops taking
// connections but answers the request in flight, and the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	const drainDelay = 2 * time.Second
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox",
		"--database", filepath.Join(t.TempDir(), "svc.db"), "--drain-delay", drainDelay.String(),
		"--metrics-listen", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = append(os.Environ(), asPaymentsd+"=1", "WALLET_PLATFORM_CREDENTIAL=tok_cmd:cmd-secret")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	urlOf := regexp.MustCompile(`url=(\S+)`)
	var base, metrics string
	deadline := time.After(60 * time.Second)
	for base == "" || metrics == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("paymentsd exited:\n%s", logs.String())
			}
			logs.WriteString(l + "\n")
			m := urlOf.FindStringSubmatch(l)
			switch {
			case m == nil:
			case strings.Contains(l, "payments service is up"):
				base = strings.TrimSuffix(m[1], "/2025-10-13")
			case strings.Contains(l, "metrics are served"):
				metrics = m[1]
			}
		case <-deadline:
			t.Fatalf("paymentsd did not start:\n%s", logs.String())
		}
	}
	go func() {
		for l := range lines {
			_ = l // drained so the process never blocks on its stderr
		}
	}()

	readyz := func() (int, string) {
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(base + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var body struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Status
	}
	if code, status := readyz(); code != 200 || status != "ready" {
		t.Fatalf("readyz before SIGTERM: %d %s", code, status)
	}

	// The metrics listener serves the service's series and the database's.
	resp, err := http.Get(metrics)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`payments_http_requests_total{method="GET",route="/readyz",status="200"} 1`,
		`payments_db_connections{state="idle"}`, `payments_db_commits_total`, `payments_settlement_backlog`, `go_goroutines`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^payments_db_commits_total (\d+)`).FindSubmatch(text); m == nil {
		t.Error("no payments_db_commits_total")
	} else if n, _ := strconv.Atoi(string(m[1])); n == 0 {
		t.Error("payments_db_commits_total 0 after the service started")
	}

	// A request in flight: its headers and half its body sent.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"customerType":"INDIVIDUAL","platformCustomerId":"in-flight-1"}`
	half := len(body) / 2
	head := "POST /2025-10-13/customers HTTP/1.1\r\nHost: paymentsd\r\nContent-Type: application/json\r\n" +
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("tok_cmd:cmd-secret")) + "\r\n" +
		"Request-Id: in-flight-1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head+body[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server reads the headers: the connection is active

	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// During the delay /readyz answers 503 draining (new connections are
	// still taken).
	var draining bool
	for !draining && time.Since(sent) < drainDelay {
		code, status := readyz()
		draining = code == 503 && status == "draining"
		if !draining {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !draining {
		t.Fatal("/readyz did not answer 503 draining after SIGTERM")
	}
	// Then the listener closes: the server is shutting down.
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Since(sent) > 30*time.Second {
			t.Fatal("the listener still takes connections 30 s after SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if time.Since(sent) < drainDelay {
		t.Fatalf("the listener closed %v after SIGTERM, before the drain delay %v", time.Since(sent), drainDelay)
	}
	select {
	case err := <-exited:
		t.Fatalf("paymentsd exited (%v) with a request in flight", err)
	default:
	}
	// The request in flight is still answered.
	if _, err := io.WriteString(conn, body[half:]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	answer, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the request in flight: %v", err)
	}
	answer.Body.Close()
	if answer.StatusCode != http.StatusCreated || answer.Header.Get("Request-Id") != "in-flight-1" {
		t.Fatalf("the request in flight: %d, Request-Id %q", answer.StatusCode, answer.Header.Get("Request-Id"))
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("paymentsd exited with %v, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("paymentsd did not exit after its drain")
	}
}

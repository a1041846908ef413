package load

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"paywallet/bff"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
)

// EventsResult is what [RunEvents] measured: the DESIGN budgets "webhooks
// on against off: create-quote and execute throughput" and "event
// delivery, state change → browser, p50 / p99".
type EventsResult struct {
	Throughput []WebhookThroughput
	Latency    *EventLatency `json:",omitempty"`
}

// WebhookThroughput compares create-quote plus execute with the service's
// webhooks off and on, on one store at one client count. Stats.RPS counts
// quote-and-execute pairs per second.
type WebhookThroughput struct {
	Store   string
	Clients int
	// Measure is MeasureDelivered or MeasureOutbox.
	Measure string
	Off, On Stats
	// Ratio is On.RPS / Off.RPS (the budget for MeasureOutbox: ≥ 0.95).
	Ratio float64
	// Delivered is how many webhooks the receiver answered 2xx during the
	// "on" runs: proof that the work measured includes delivery.
	Delivered int64
	// Drained and CPUPerDeliveryUs (MeasureOutbox cells): after the
	// outbox cells of a store the events they recorded are catalogued and
	// delivered with nothing else running, and the process's CPU time
	// (user + system) over those deliveries, per delivery: the service's
	// (the receiver is a process of its own; on PostgreSQL the database
	// server's share is not in it).
	Drained          int64   `json:",omitempty"`
	CPUPerDeliveryUs float64 `json:",omitempty"`
	// SigningUs is the CPU time of a delivery's three signatures alone
	// (webhooksig.Keys.Sign over a body of the drained events' mean
	// size), measured in the same run: the floor of CPUPerDeliveryUs on
	// this machine.
	SigningUs float64 `json:",omitempty"`
}

// What a WebhookThroughput cell compares.
const (
	// MeasureDelivered: the service's workers run, and "on" delivers
	// every event, signed, over HTTP, its outbox emptied after each run
	// (that time counted as the run's).
	MeasureDelivered = "delivered"
	// MeasureOutbox: the service's workers are stopped, so "on" only
	// records its events in the outbox, in create-quote's and execute's
	// own transactions, and delivers none: what the outbox itself costs
	// the API, apart from the delivery work (signing, HTTP, the worker's
	// transactions) that a deployment may run elsewhere.
	MeasureOutbox = "outbox"
)

// EventLatency is the time from a state change in the service to its event
// on the BFF's GET /api/events stream, over every event the stream carried.
type EventLatency struct {
	Store    string
	Executes int // payments made, one every eventPace
	Events   int // events read from the stream
	// Missing is how many of the payments' first events (the transaction
	// leaving PENDING) never arrived.
	Missing                    int
	P50Ms, P90Ms, P99Ms, MaxMs float64
}

// eventPace is the gap between two payments of the latency run: a steady
// stream of changes, not a burst.
const eventPace = 20 * time.Millisecond

// RunEvents measures the webhooks' cost and speed.
//
// Throughput: for each store (SQLite, and PostgreSQL when o.PostgresURL is
// set) and client count (1 and 8; 1 in a smoke run), one production-mode
// service whose endpoint is a loopback receiver (a process of its own) that
// answers 204 to every POST runs with its events paused (off:
// Service.PauseEvents, as Config.NoEvents) and recorded (on: in the event
// log and delivered by the worker, signed, over HTTP), in alternation
// (off, on, on, off, …), so what else slows the machine falls on both, and
// both sides share one database, its connections and its customers. Each
// call is POST /quotes then POST /quotes/{id}/execute with the wallet's
// stamp (made in the call, the same work on both sides), as RunService
// does them; each client has its own funded wallet. Before every timed run
// the collector runs and the database's log is checkpointed (quiesce).
// After each "on" run the outbox is let empty and that time counts as the
// run's: the figure is what the service sustains with every event
// delivered, not what it takes in while the worker falls behind
// (MeasureDelivered). Then the service's workers are stopped and the same
// comparison runs again with "on" only recording its events
// (MeasureOutbox): the outbox's own cost to create-quote and execute,
// apart from the delivery work the same two cores also do in the first.
// What those runs recorded is delivered last with the worker's code alone,
// and the process's CPU time per delivery is reported.
//
// Latency: a production-mode service on SQLite delivers its webhooks to a
// BFF (POST /webhooks/service, as cmd/wallet wires them), and a headless
// Chromium page holds the BFF's GET /api/events stream open with an
// EventSource, signed in with the cookie of the customer's browser
// session, as the wallet page does. The customer makes a payment every
// eventPace; for each event the page's EventSource delivers, the latency
// is the time it was delivered (taken in the page) minus the event's
// timestamp, which the service takes in the transaction that makes the
// change, just before it commits (same clock: one machine). Every
// execute's event, its settlement's and the balance events are counted.
func RunEvents(ctx context.Context, o Options) (*EventsResult, error) {
	p, err := o.plan()
	if err != nil {
		return nil, err
	}
	out := &EventsResult{}
	clients := []int{1, 8}
	if p.smoke {
		clients = []int{1}
	}
	if o.Clients != nil {
		clients = o.Clients
	}
	for _, kind := range p.stores() {
		cells, err := runWebhookThroughput(ctx, p, kind, clients)
		out.Throughput = append(out.Throughput, cells...)
		if err != nil {
			return out, fmt.Errorf("load: webhooks on %s: %w", kind, err)
		}
	}
	out.Latency, err = runEventLatency(ctx, p)
	if err != nil {
		return out, fmt.Errorf("load: event latency: %w", err)
	}
	return out, nil
}

// receiver is a webhook endpoint that answers 204 at once. It runs in a
// process of its own (this binary again, see ServeReceiverIfAsked), so
// that the CPU time the bench reads from its own process is the service's
// alone, as the budget "the service's CPU per delivered webhook" means it:
// a receiver in the same process put its HTTP server's share (a fifth of
// the figure) on the service's account.
type receiver struct {
	url   string
	count func() (int64, error) // deliveries so far
	// meanBody is the mean size of the bodies received so far (1,500
	// bytes before any).
	meanBody func() int
	close    func()
}

// drainProfileEnv names a file for a CPU profile of drainMeasured (the
// last store's drain wins).
const drainProfileEnv = "PAYWALLET_BENCH_DRAIN_PROFILE"

// outboxProfileEnv names a directory for CPU profiles of the outbox
// cells' timed runs, one file per run (<store>-c<clients>-<off|on>-<round>.prof;
// go tool pprof merges several): where "on" spends what "off" does not.
const outboxProfileEnv = "PAYWALLET_BENCH_OUTBOX_PROFILE"

// profiled runs fn under a CPU profile written to path when path is not
// empty (drainProfileEnv, outboxProfileEnv).
func profiled(path string, fn func()) {
	if path == "" {
		fn()
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fn()
		return
	}
	defer f.Close()
	if pprof.StartCPUProfile(f) != nil {
		fn()
		return
	}
	defer pprof.StopCPUProfile()
	fn()
}

// receiverEnv asks this binary to be the bench's webhook receiver.
const receiverEnv = "PAYWALLET_BENCH_WEBHOOK_RECEIVER"

// ServeReceiverIfAsked makes this process the webhook receiver when its
// parent started it as one (startReceiver), and exits when the parent
// closes its standard input; otherwise it returns at once. Every binary
// that runs RunEvents calls it first thing (the bench's main, the load
// tests' TestMain).
func ServeReceiverIfAsked() {
	if os.Getenv(receiverEnv) != "1" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
	var delivered, bytes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks", func(w http.ResponseWriter, req *http.Request) {
		n, _ := io.Copy(io.Discard, req.Body)
		bytes.Add(n)
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, delivered.Load())
	})
	mux.HandleFunc("GET /bytes", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, bytes.Load())
	})
	go func() { _ = (&http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: mux}).Serve(ln) }()
	fmt.Println("http://" + ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent goes
	os.Exit(0)
}

func startReceiver() (*receiver, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), receiverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { stdin.Close(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return nil, fmt.Errorf("webhook receiver process: %w", err)
	}
	base := strings.TrimSpace(line)
	hc := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int64, error) {
		resp, err := hc.Get(base + path)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(string(b), 10, 64)
	}
	return &receiver{
		url:   base + "/webhooks",
		count: func() (int64, error) { return get("/count") },
		meanBody: func() int {
			n, err1 := get("/count")
			b, err2 := get("/bytes")
			if err1 != nil || err2 != nil || n == 0 {
				return 1500
			}
			return int(b / n)
		},
		close: stop,
	}, nil
}

// setWebhookEndpoint points the stack's webhooks at url (PATCH /config).
func (s *stack) setWebhookEndpoint(ctx context.Context, url string) error {
	return s.api.expect(ctx, http.StatusOK, nil, "PATCH", "/config", mustJSON(map[string]string{"webhookEndpoint": url}))
}

// quoteAndExecute creates a quote from the payer's wallet, stamps its
// payload and executes it.
func (s *stack) quoteAndExecute(ctx context.Context, py *payer) error {
	it, err := s.createQuote(ctx, py)
	if err != nil {
		return err
	}
	if err := prepareExecutes([]*quoteItem{it}); err != nil {
		return err
	}
	return s.execute(ctx, it)
}

// payers makes n payers on the stack, with ACTIVE destinations.
func (s *stack) payers(ctx context.Context, n int, prefix string) ([]*payer, error) {
	out := make([]*payer, n)
	if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error {
		var err error
		out[i], err = s.newPayer(ctx, fmt.Sprintf("%s%d", prefix, i))
		return err
	}); err != nil {
		return nil, err
	}
	dests := make([]string, n)
	for i, py := range out {
		dests[i] = py.dest
	}
	return out, s.waitActive(ctx, dests)
}

// drainOutbox waits until the stack has no pending webhook event (at most
// a minute) and returns how long that took.
func (s *stack) drainOutbox(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	for {
		pending, err := s.pendingEvents(ctx)
		if err != nil || pending == 0 {
			return time.Since(start), err
		}
		if time.Since(start) > time.Minute {
			return time.Since(start), fmt.Errorf("%d webhook events still pending after a minute", pending)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// drainMeasured delivers what the stack recorded (its workers stopped),
// calling DeliverWebhooks until nothing is pending, and returns the
// deliveries and the process's CPU time they took. What is pending is
// counted (a transaction of the bench's own) only when a round delivered
// nothing, so that the figure is the worker's.
func (s *stack) drainMeasured(ctx context.Context, rcv *receiver) (int64, time.Duration, error) {
	d0, err := rcv.count()
	if err != nil {
		return 0, 0, err
	}
	cpu0 := processCPU()
	// A CPU profile of the drain alone, on request, for finding where a
	// delivery's microseconds go.
	profiled(os.Getenv(drainProfileEnv), func() {
		for {
			var n, pending int
			if n, err = s.svc.DeliverWebhooks(ctx); err != nil {
				return
			}
			if n > 0 {
				continue
			}
			if pending, err = s.pendingEvents(ctx); err != nil || pending == 0 {
				return
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	used := processCPU() - cpu0
	d1, err := rcv.count()
	return d1 - d0, used, err
}

// quiesce leaves the stack owing nothing before a timed run: the
// collector has run, and the database has written back what the runs
// before (and the work between) left in its write-ahead log (SQLite: a
// RESTART checkpoint from a connection of the bench's own, after which
// the next commit writes the log from its start again, as after SQLite's
// own checkpoints; TRUNCATE would make every run grow the file anew;
// PostgreSQL: CHECKPOINT, which is for the whole cluster). Otherwise a
// run pays, at random, for what another left: SQLite checkpoints on the
// commit that takes its log past 1,000 pages, and a collection starts
// when the heap has grown enough, whichever run grew it. Both sides of a
// cell quiesce before each of their runs; what a run writes itself stays
// its own cost.
//
// In the delivered cells the workers run on during "off" runs, so a
// payment made in an "on" run may settle during an "off" one and record
// no settlement event: a measurement's artefact, which falls on both
// sides (settlement work crosses over both ways).
func (s *stack) quiesce(ctx context.Context) error {
	runtime.GC()
	switch {
	case s.sqlitePath != "":
		db, err := sql.Open("sqlite", "file:"+s.sqlitePath+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		defer db.Close()
		var busy, logPages, done int
		if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &logPages, &done); err != nil {
			return fmt.Errorf("load: checkpoint %s: %w", s.sqlitePath, err)
		}
	case s.pgExec != nil:
		if err := s.pgExec(ctx, "CHECKPOINT"); err != nil {
			return fmt.Errorf("load: CHECKPOINT (the bench's PostgreSQL role needs pg_checkpoint): %w", err)
		}
	}
	return nil
}

// signingCPU is the process's CPU time per delivery's signatures
// (webhooksig.Keys.Sign: X-Service-Signature, Service-Webhook-Signature and
// the Standard Webhooks one) over a body of size bytes, in microseconds.
func signingCPU(size int) (float64, error) {
	g, err := webhooksig.GenerateGeneration()
	if err != nil {
		return 0, err
	}
	keys, err := webhooksig.NewKeys([]*webhooksig.Generation{g}, nil)
	if err != nil {
		return 0, err
	}
	body := []byte(`{"id":"Webhook:bench","data":"` + strings.Repeat("x", max(size-32, 0)) + `"}`)
	const n = 2000
	now := time.Now()
	start := processCPU()
	for i := range n {
		if _, err := keys.Sign("Webhook:bench-"+strconv.Itoa(i), body, now); err != nil {
			return 0, err
		}
	}
	return float64((processCPU() - start).Microseconds()) / n, nil
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pendingEvents counts what the stack has not delivered yet: the events
// its endpoints' cursors have not passed (after cataloguing the log: taking
// a turn the worker would otherwise take) and their retries.
func (s *stack) pendingEvents(ctx context.Context) (int, error) {
	var pending int
	// Lazy, as the worker's: CatalogEvents needs each statement's own
	// snapshot (READ COMMITTED on PostgreSQL).
	err := s.store.TxLazy(ctx, func(tx store.Tx) error {
		pending = 0
		for {
			// 0: the log is empty, or another transaction is
			// cataloguing (then the count is short for a moment).
			n, err := tx.CatalogEvents(ctx, 1000)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
		}
		head, err := tx.EventsHead(ctx)
		if err != nil {
			return err
		}
		eps, err := tx.ListWebhookEndpoints(ctx)
		if err != nil {
			return err
		}
		for _, e := range eps {
			if e.Enabled {
				pending += int(head-e.Cursor) + e.PendingRetries
			}
		}
		return nil
	})
	return pending, err
}

// throughputRounds is how many times a MeasureDelivered cell alternates
// between off and on (each "on" run ends with the outbox drained, which
// takes its time), and outboxRounds a MeasureOutbox cell: rounds of a
// quarter second a side. On two cores one run's pairs per second differ
// from the next's by up to a tenth either way (a commit's fsync, the
// database server's own work); the budget is 5 %, so the outbox cells
// take many short runs, whose noise averages out and whose fine
// alternation puts the drift of a cell (the database growing, a
// checkpoint) on both sides.
const (
	throughputRounds = 6
	outboxRounds     = 24
)

func runWebhookThroughput(ctx context.Context, p plan, kind string, clients []int) ([]WebhookThroughput, error) {
	rcv, err := startReceiver()
	if err != nil {
		return nil, err
	}
	defer rcv.close()
	// One service for both sides: "off" is the same service with its
	// events paused (Service.PauseEvents), so that the two sides share
	// the database, its files, the connections, the customers and the
	// process, and differ in the events alone (two services side by side
	// differed by up to a tenth either way from one run to the next).
	s, err := startStack(ctx, p, kind, "hooks")
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.setWebhookEndpoint(ctx, rcv.url); err != nil {
		return nil, err
	}
	payers, err := s.payers(ctx, slices.Max(clients), "hooks")
	if err != nil {
		return nil, err
	}
	var cells []WebhookThroughput
	for _, measure := range []string{MeasureDelivered, MeasureOutbox} {
		if measure == MeasureOutbox {
			s.haltWorkers()
		}
		for _, c := range clients {
			cell, err := compareWebhooks(ctx, p, kind, measure, c, s, payers, rcv)
			cells = append(cells, cell)
			if err != nil {
				return cells, err
			}
			if err := ctx.Err(); err != nil {
				return cells, err
			}
		}
	}
	if cells[0].Delivered == 0 {
		return cells, fmt.Errorf("the receiver got no webhook while webhooks were on")
	}
	// What the outbox cells recorded is delivered now, once, after the
	// timed runs: catalogued, signed and sent by the worker's code, the
	// process's CPU time counted.
	drained, used, err := s.drainMeasured(ctx, rcv)
	if err != nil {
		return cells, err
	}
	// Each pair's execute recorded at least one event, with nothing
	// delivering them.
	var pairs int64
	for _, c := range cells {
		if c.Measure == MeasureOutbox {
			pairs += int64(c.On.Requests)
		}
	}
	if drained < pairs {
		return cells, fmt.Errorf("%d pairs recorded %d webhook events with the workers stopped, want at least one each", pairs, drained)
	}
	if n := drained; n > 0 {
		per := float64(used.Microseconds()) / float64(n)
		signing, err := signingCPU(rcv.meanBody())
		if err != nil {
			return cells, err
		}
		p.log("%-8s %d webhooks catalogued and delivered with the worker's code alone: CPU %.0f µs per delivery; its three signatures alone %.0f µs",
			kind, n, per, signing)
		for i := range cells {
			if cells[i].Measure == MeasureOutbox {
				cells[i].Drained, cells[i].CPUPerDeliveryUs, cells[i].SigningUs = n, per, signing
			}
		}
	}
	return cells, nil
}

// compareWebhooks runs the service with its events paused (off) and
// recorded (on) in alternation at c clients and returns the cell. With
// MeasureDelivered each "on" run's events are let be delivered after it,
// that time counted as the run's.
func compareWebhooks(ctx context.Context, p plan, kind, measure string, c int, s *stack, payers []*payer, rcv *receiver) (WebhookThroughput, error) {
	var o, w sample
	var delivered int64
	// Three times the plan's duration a side: the budget is a few per
	// cent, and short runs on two cores differ by more than that.
	dur := p.dur
	if !p.smoke {
		dur *= 3
	}
	var offRPS, onRPS []float64
	profDir, rounds := "", throughputRounds
	if measure == MeasureOutbox {
		profDir, rounds = os.Getenv(outboxProfileEnv), outboxRounds
	}
	if p.smoke {
		rounds = 2 // one ABBA
	}
	timed := func(side string, round int) (sample, error) {
		if err := s.quiesce(ctx); err != nil {
			return sample{}, err
		}
		var sm sample
		prof := ""
		if profDir != "" {
			prof = filepath.Join(profDir, fmt.Sprintf("%s-c%d-%s-%d.prof", kind, c, side, round))
		}
		profiled(prof, func() {
			sm = run(ctx, c, dur/time.Duration(rounds), p.cap/rounds, func(ctx context.Context, client, _ int) error {
				return s.quoteAndExecute(ctx, payers[client])
			})
		})
		return sm, nil
	}
	defer s.svc.PauseEvents(false)
	offRun := func(round int) error {
		s.svc.PauseEvents(true)
		defer s.svc.PauseEvents(false)
		so, err := timed("off", round)
		if err != nil {
			return err
		}
		o.add(so)
		offRPS = append(offRPS, so.rps())
		return nil
	}
	onRun := func(round int) error {
		d0, err := rcv.count()
		if err != nil {
			return err
		}
		// With MeasureOutbox nothing is catalogued between runs (the
		// bench's pendingEvents would do the worker's cataloguing, and
		// its writes would be checkpointed and vacuumed during the next
		// run): runWebhookThroughput checks afterwards that every pair
		// recorded its events.
		sm, err := timed("on", round)
		if err != nil {
			return err
		}
		if measure == MeasureDelivered {
			// Work the worker put off is work: the time the outbox
			// takes to empty counts as the calls' time, and the next
			// "off" run does not share the machine with the backlog.
			drained, err := s.drainOutbox(ctx)
			if err != nil {
				return err
			}
			sm.elapsed += drained
		}
		w.add(sm)
		onRPS = append(onRPS, sm.rps())
		d1, err := rcv.count()
		if err != nil {
			return err
		}
		delivered += d1 - d0
		return nil
	}
	for round := range rounds {
		// ABBA: a side that always ran first (or second) would take
		// what the other leaves behind at a fixed phase.
		first, second := offRun, onRun
		if round%2 == 1 {
			first, second = onRun, offRun
		}
		if err := first(round); err != nil {
			return WebhookThroughput{}, err
		}
		if err := second(round); err != nil {
			return WebhookThroughput{}, err
		}
	}
	cell := WebhookThroughput{Store: kind, Clients: c, Measure: measure, Off: o.stats(), On: w.stats(), Delivered: delivered}
	if cell.Off.RPS > 0 {
		cell.Ratio = cell.On.RPS / cell.Off.RPS
	}
	ratios := make([]float64, len(offRPS))
	for i := range offRPS {
		if offRPS[i] > 0 {
			ratios[i] = onRPS[i] / offRPS[i]
		}
	}
	p.log("%-8s rounds of c=%d (%s), pairs/s: off %s; on %s; on/off %s", kind, c, measure,
		floats(offRPS, "%.0f"), floats(onRPS, "%.0f"), floats(ratios, "%.3f"))
	logCell(p, kind, "quote+execute hooks off ("+measure+")", cell.Off, "")
	logCell(p, kind, "quote+execute hooks on ("+measure+")", cell.On, fmt.Sprintf(" delivered=%d on/off=%.3f", delivered, cell.Ratio))
	if measure == MeasureOutbox && delivered > 0 {
		return cell, fmt.Errorf("%d webhooks were delivered with the workers stopped", delivered)
	}
	return cell, nil
}

func runEventLatency(ctx context.Context, p plan) (*EventLatency, error) {
	s, err := startStack(ctx, p, "sqlite", "events")
	if err != nil {
		return nil, err
	}
	defer s.close()
	base, err := s.startBFF()
	if err != nil {
		return nil, err
	}
	if err := s.setWebhookEndpoint(ctx, base+bff.WebhookPath); err != nil {
		return nil, err
	}

	// The browser: a session signed in through the BFF.
	c := customer{email: fmt.Sprintf("events-%d@bench.example.com", s.seq.Add(1))}
	cookie, customerID, err := s.signInThroughBFF(ctx, base, c.email)
	if err != nil {
		return nil, err
	}
	c.id = customerID
	if err := s.walletOf(ctx, &c); err != nil {
		return nil, err
	}
	// The payments are made on the service API with a session of the
	// wallet's own (the page's key stays in the page).
	py, err := s.payerOf(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := s.waitActive(ctx, []string{py.dest}); err != nil {
		return nil, err
	}

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	stream, err := openBrowserEvents(sctx, base, cookie)
	if err != nil {
		return nil, err
	}
	defer stream.close()

	executes := 200
	if p.smoke {
		executes = 4
	}
	var lat []time.Duration
	executed := map[string]bool{} // transaction ids whose first event is due
	heard := map[string]bool{}
	collect := func(a arrival) {
		lat = append(lat, a.at.Sub(a.timestamp))
		if strings.HasPrefix(a.typ, "OUTGOING_PAYMENT.") {
			heard[a.resource] = true
		}
	}
	tick := time.NewTicker(eventPace)
	defer tick.Stop()
	for i := 0; i < executes; {
		select {
		case a := <-stream.events:
			collect(a)
		case <-tick.C:
			it, err := s.createQuote(ctx, py)
			if err == nil {
				err = prepareExecutes([]*quoteItem{it})
			}
			if err == nil {
				err = s.execute(ctx, it)
			}
			if err != nil {
				return nil, err
			}
			executed[it.tx] = true
			i++
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Wait for the stragglers: until every payment was heard and nothing
	// came for a second (settlements follow), at most 30 s.
	deadline := time.After(30 * time.Second)
	quiet := time.NewTimer(time.Second)
	defer quiet.Stop()
wait:
	for {
		select {
		case a := <-stream.events:
			collect(a)
			quiet.Reset(time.Second)
		case <-quiet.C:
			if len(heard) >= len(executed) {
				break wait
			}
			quiet.Reset(time.Second)
		case <-deadline:
			break wait
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	missing := 0
	for tx := range executed {
		if !heard[tx] {
			missing++
		}
	}
	if len(lat) == 0 {
		return nil, fmt.Errorf("no event arrived on the stream")
	}
	slices.Sort(lat)
	r := &EventLatency{Store: "sqlite", Executes: executes, Events: len(lat), Missing: missing,
		P50Ms: ms(percentile(lat, 50)), P90Ms: ms(percentile(lat, 90)), P99Ms: ms(percentile(lat, 99)), MaxMs: ms(lat[len(lat)-1])}
	p.log("events   state change → browser EventSource: %d payments, %d events, %d missing, p50=%.2fms p90=%.2fms p99=%.2fms max=%.2fms",
		r.Executes, r.Events, r.Missing, r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs)
	if missing > 0 {
		return r, fmt.Errorf("%d of %d payments were never heard on the stream", missing, executes)
	}
	// A stream that dropped and reconnected, or told the page to read
	// afresh, hid a pause in the figures: not a clean run.
	if problems := stream.problems(); len(problems) > 0 {
		return r, fmt.Errorf("the event stream in the browser: %s", strings.Join(problems, "; "))
	}
	return r, nil
}

// arrival is one event read from the SSE stream.
type arrival struct {
	at        time.Time // when the page's EventSource delivered it
	timestamp time.Time // the event's own timestamp (the state change)
	typ       string
	resource  string // data.id
}

// floats formats values with one verb, space-separated.
func floats(vs []float64, verb string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf(verb, v)
	}
	return strings.Join(parts, " ")
}

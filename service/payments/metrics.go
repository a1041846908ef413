package payments

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"paywallet/shared/wire"
)

// metrics are the domain's Prometheus series: the workers' backlog and lag,
// webhook delivery latency and outcomes, sign-ins. The workers set them at
// the end of each round from what the round read anyway, so a scrape never
// queries the database. Registered on Config.Registry when it is set;
// without one they are kept but never exported.
type metrics struct {
	settlementBacklog prometheus.Gauge
	settlementLag     prometheus.Gauge
	webhookBacklog    *prometheus.GaugeVec
	webhookLag        prometheus.Gauge
	webhookDelivery   prometheus.Histogram
	webhookResults    *prometheus.CounterVec
	webhookSignings   prometheus.Counter
	signIns           *prometheus.CounterVec

	mu sync.Mutex
	// lagByEndpoint is each endpoint's lag as its last round left it;
	// the lag gauge is their maximum.
	lagByEndpoint map[string]float64
	// shown are the endpoints this instance has a backlog series of, and
	// checkedAt when the worker last looked for those deleted meanwhile
	// (by another instance: this one forgets its own deletions at once).
	// Without it a deleted endpoint's backlog would stay on the scrape,
	// and its lag in the lag gauge, for the instance's life.
	shown     map[string]bool
	checkedAt time.Time
}

// endpointSeriesCheck is how often the worker looks for deleted endpoints
// among those it shows series of.
const endpointSeriesCheck = time.Minute

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		settlementBacklog: prometheus.NewGauge(prometheus.GaugeOpts{Name: "payments_settlement_backlog",
			Help: "Payments due for their next settlement step that the settlement worker found in its last round and did not apply."}),
		settlementLag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "payments_settlement_lag_seconds",
			Help: "How overdue the oldest due payment was at the settlement worker's last round (0: none due)."}),
		webhookBacklog: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payments_webhook_backlog",
			Help: "Events behind the endpoint's cursor or waiting for a retry, as this instance's last round to the endpoint left them."}, []string{"endpoint"}),
		webhookLag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "payments_webhook_lag_seconds",
			Help: "Age of the oldest event a webhook round of this instance had to leave undelivered (0: every endpoint caught up)."}),
		webhookDelivery: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "payments_webhook_delivery_seconds",
			Help:    "Time from an event's creation to its delivery with a 2xx answer.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400}}),
		webhookResults: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payments_webhook_deliveries_total",
			Help: "Webhook delivery attempts by result: delivered (2xx), retrying (failed, tried again later), failed (given up)."}, []string{"result"}),
		webhookSignings: prometheus.NewCounter(prometheus.CounterOpts{Name: "payments_webhook_signings_total",
			Help: "Sets of webhook signature headers signed: one per delivery, except that the endpoints of one round getting the same event in the same second share one."}),
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payments_sign_ins_total",
			Help: "Sign-ins (credential verifications that issued a session, or were refused) by method and result."}, []string{"method", "result"}),
		lagByEndpoint: map[string]float64{},
		shown:         map[string]bool{},
	}
	for _, r := range []string{"delivered", "retrying", "failed"} {
		m.webhookResults.WithLabelValues(r)
	}
	for _, method := range []string{wire.TypeEmailOTP, wire.TypePasskey, wire.TypeOAuth} {
		m.signIns.WithLabelValues(method, "success")
		m.signIns.WithLabelValues(method, "failure")
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.settlementBacklog, m.settlementLag, m.webhookBacklog, m.webhookLag,
		m.webhookDelivery, m.webhookResults, m.webhookSignings, m.signIns} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// settlementRound records what a settlement round found: due payments,
// how many it applied, and when the oldest was due.
func (m *metrics) settlementRound(due, applied int, oldest, now time.Time) {
	m.settlementBacklog.Set(float64(max(due-applied, 0)))
	if due == 0 || oldest.IsZero() {
		m.settlementLag.Set(0)
		return
	}
	m.settlementLag.Set(max(now.Sub(oldest).Seconds(), 0))
}

// webhookEndpointRound records an endpoint's state after a round of this
// instance: its backlog and the age of its oldest event left undelivered
// (0 when none).
func (m *metrics) webhookEndpointRound(endpoint string, backlog int64, lag float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.webhookBacklog.WithLabelValues(endpoint).Set(float64(max(backlog, 0)))
	m.shown[endpoint] = true
	m.lagByEndpoint[endpoint] = lag
	m.setLag()
}

// forgetEndpoint drops a deleted endpoint's backlog series and its lag.
func (m *metrics) forgetEndpoint(endpoint string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(endpoint)
	m.setLag()
}

// endpointCheckDue reports whether the worker should look for deleted
// endpoints now: this instance shows series of some, and has not looked
// (keepEndpoints) for endpointSeriesCheck.
func (m *metrics) endpointCheckDue(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.shown) > 0 && now.Sub(m.checkedAt) >= endpointSeriesCheck
}

// keepEndpoints forgets every endpoint shown that is not among exist (the
// endpoints the store held at now), and counts as the look.
func (m *metrics) keepEndpoints(exist map[string]bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checkedAt = now
	for id := range m.shown {
		if !exist[id] {
			m.forget(id)
		}
	}
	m.setLag()
}

func (m *metrics) forget(endpoint string) {
	m.webhookBacklog.DeleteLabelValues(endpoint)
	delete(m.shown, endpoint)
	delete(m.lagByEndpoint, endpoint)
}

// signed counts a set of webhook signature headers signed.
func (m *metrics) signed() { m.webhookSignings.Inc() }

// webhooksCaughtUp records a round that found nothing due.
func (m *metrics) webhooksCaughtUp() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.lagByEndpoint)
	m.setLag()
}

func (m *metrics) setLag() {
	lag := 0.0
	for _, l := range m.lagByEndpoint {
		lag = max(lag, l)
	}
	m.webhookLag.Set(lag)
}

// delivered records a 2xx delivery of an event created at created.
func (m *metrics) delivered(created, now time.Time) {
	m.webhookResults.WithLabelValues("delivered").Inc()
	m.webhookDelivery.Observe(max(now.Sub(created).Seconds(), 0))
}

// failedAttempt records an attempt that failed: retrying, or given up.
func (m *metrics) failedAttempt(givenUp bool) {
	if givenUp {
		m.webhookResults.WithLabelValues("failed").Inc()
		return
	}
	m.webhookResults.WithLabelValues("retrying").Inc()
}

// signIn counts a credential verification of method: a success when it
// issued a session, a failure when it was refused (a wrong code, passkey or
// token, a lock-out). The first leg of an e-mail code sign-in (a challenge
// to sign) is neither, nor is the service's own failure (a database that
// went away, an internal error): that is no failure of the person's.
func (m *metrics) signIn(method string, challenge *wire.SignedRequestChallenge, err error) {
	switch method {
	case wire.TypeEmailOTP, wire.TypePasskey, wire.TypeOAuth:
	default:
		return
	}
	var e *Error
	switch {
	case err == nil && challenge == nil:
		m.signIns.WithLabelValues(method, "success").Inc()
	case err != nil && errors.As(err, &e) && e.Code != CodeInternal && e.Code != CodeServiceUnavailable:
		m.signIns.WithLabelValues(method, "failure").Inc()
	}
}

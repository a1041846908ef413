package report

import (
	"strings"
	"testing"

	"paywallet/internal/bench/load"
)

// TestEventBudgets: each throughput budget (every event delivered; the
// outbox alone) is judged on the worst store's one-client ratio of its own
// measure (a cell without one is a delivered one, as results written before
// there were two), the latency budget on p50 and p99 (and no payment left
// unheard); without the step all read "not measured".
func TestEventBudgets(t *testing.T) {
	cell := func(store string, clients int, ratio float64) load.WebhookThroughput {
		return load.WebhookThroughput{Store: store, Clients: clients, Ratio: ratio, Measure: load.MeasureDelivered,
			Off: load.Stats{RPS: 100}, On: load.Stats{RPS: 100 * ratio}, Delivered: 10}
	}
	outbox := func(store string, ratio float64) load.WebhookThroughput {
		c := cell(store, 1, ratio)
		c.Measure, c.Delivered = load.MeasureOutbox, 0
		return c
	}
	old := func(c load.WebhookThroughput) load.WebhookThroughput { c.Measure = ""; return c }
	cases := []struct {
		name                     string
		events                   *load.EventsResult
		ratioVerdict, latVerdict string
		ratioAim, latAim         bool
		outboxVerdict            string
	}{
		{"not measured", nil, "not measured", "not measured", false, false, "not measured"},
		{"the outbox within, deliveries over", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.8), outbox("sqlite", 0.95), outbox("postgres", 0.93)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}}, "over", "within", false, true, "within"},
		{"the outbox over", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.95), outbox("sqlite", 0.95), outbox("postgres", 0.8)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}}, "within", "within", false, true, "over"},
		{"results of before: delivered", &load.EventsResult{
			Throughput: []load.WebhookThroughput{old(cell("sqlite", 1, 0.8))},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}}, "over", "within", false, true, "not measured"},
		{"within, aims met", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.98), cell("postgres", 1, 0.99), cell("sqlite", 8, 0.5)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}}, "within", "within", true, true, "not measured"},
		{"the worst store decides", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.85), cell("postgres", 1, 0.95)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 30, P99Ms: 120}}, "over", "within", false, false, "not measured"},
		{"p99 over", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.92)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 30, P99Ms: 600}}, "within", "over", false, false, "not measured"},
		{"a payment never heard", &load.EventsResult{
			Latency: &load.EventLatency{Events: 10, Missing: 1, P50Ms: 10, P99Ms: 20}}, "not measured", "over", false, false, "not measured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Events: tc.events}
			b := r.eventBudgets()
			if len(b) != 3 {
				t.Fatalf("%d budgets", len(b))
			}
			if b[0].Verdict != tc.ratioVerdict || b[0].AimMet != tc.ratioAim {
				t.Errorf("throughput: %s (aim %v), want %s (aim %v); measured %q", b[0].Verdict, b[0].AimMet, tc.ratioVerdict, tc.ratioAim, b[0].Measured)
			}
			if b[1].Verdict != tc.outboxVerdict {
				t.Errorf("outbox: %s, want %s; measured %q", b[1].Verdict, tc.outboxVerdict, b[1].Measured)
			}
			if b[2].Verdict != tc.latVerdict || b[2].AimMet != tc.latAim {
				t.Errorf("latency: %s (aim %v), want %s (aim %v)", b[2].Verdict, b[2].AimMet, tc.latVerdict, tc.latAim)
			}
			var md strings.Builder
			r.eventsSection(&md)
			if tc.events != nil && len(tc.events.Throughput) > 0 && !strings.Contains(md.String(), "| sqlite | 1 | ") {
				t.Errorf("the section has no SQLite row:\n%s", md.String())
			}
		})
	}
}

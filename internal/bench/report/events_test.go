package report

import (
	"strings"
	"testing"

	"paywallet/internal/bench/load"
)

// TestEventBudgets: the throughput budget is judged on the worst store's
// one-client ratio, the latency budget on p50 and p99 (and no payment left
// unheard); without the step both read "not measured".
func TestEventBudgets(t *testing.T) {
	cell := func(store string, clients int, ratio float64) load.WebhookThroughput {
		return load.WebhookThroughput{Store: store, Clients: clients, Ratio: ratio,
			Off: load.Stats{RPS: 100}, On: load.Stats{RPS: 100 * ratio}, Delivered: 10}
	}
	cases := []struct {
		name                     string
		events                   *load.EventsResult
		ratioVerdict, latVerdict string
		ratioAim, latAim         bool
	}{
		{"not measured", nil, "not measured", "not measured", false, false},
		{"within, aims met", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.98), cell("postgres", 1, 0.99), cell("sqlite", 8, 0.5)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}}, "within", "within", true, true},
		{"the worst store decides", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.85), cell("postgres", 1, 0.95)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 30, P99Ms: 120}}, "over", "within", false, false},
		{"p99 over", &load.EventsResult{
			Throughput: []load.WebhookThroughput{cell("sqlite", 1, 0.92)},
			Latency:    &load.EventLatency{Events: 10, P50Ms: 30, P99Ms: 600}}, "within", "over", false, false},
		{"a payment never heard", &load.EventsResult{
			Latency: &load.EventLatency{Events: 10, Missing: 1, P50Ms: 10, P99Ms: 20}}, "not measured", "over", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Events: tc.events}
			b := r.eventBudgets()
			if len(b) != 2 {
				t.Fatalf("%d budgets", len(b))
			}
			if b[0].Verdict != tc.ratioVerdict || b[0].AimMet != tc.ratioAim {
				t.Errorf("throughput: %s (aim %v), want %s (aim %v); measured %q", b[0].Verdict, b[0].AimMet, tc.ratioVerdict, tc.ratioAim, b[0].Measured)
			}
			if b[1].Verdict != tc.latVerdict || b[1].AimMet != tc.latAim {
				t.Errorf("latency: %s (aim %v), want %s (aim %v)", b[1].Verdict, b[1].AimMet, tc.latVerdict, tc.latAim)
			}
			var md strings.Builder
			r.eventsSection(&md)
			if tc.events != nil && len(tc.events.Throughput) > 0 && !strings.Contains(md.String(), "| sqlite | 1 |") {
				t.Errorf("the section has no SQLite row:\n%s", md.String())
			}
		})
	}
}

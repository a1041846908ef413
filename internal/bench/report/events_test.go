package report

import (
	"strings"
	"testing"

	"paywallet/internal/bench/load"
)

// TestEventBudgets: the outbox budget is judged on the worst of its cells,
// both stores and every client count (a cell written before there were two
// measures is a delivered one, not judged); the CPU budget on the worst
// cell's CPU per delivery; the latency budget on p50 and p99 (and no
// payment left unheard); without the step all read "not measured".
func TestEventBudgets(t *testing.T) {
	cell := func(measure, store string, clients int, ratio, cpu float64) load.WebhookThroughput {
		return load.WebhookThroughput{Store: store, Clients: clients, Ratio: ratio, Measure: measure,
			Off: load.Stats{RPS: 100}, On: load.Stats{RPS: 100 * ratio}, CPUPerDeliveryUs: cpu}
	}
	outbox := func(store string, clients int, ratio, cpu float64) load.WebhookThroughput {
		return cell(load.MeasureOutbox, store, clients, ratio, cpu)
	}
	delivered := func(store string, ratio float64) load.WebhookThroughput {
		return cell(load.MeasureDelivered, store, 1, ratio, 0)
	}
	old := func(c load.WebhookThroughput) load.WebhookThroughput { c.Measure = ""; return c }
	fine := &load.EventLatency{Events: 10, P50Ms: 15, P99Ms: 60}
	cases := []struct {
		name                                  string
		events                                *load.EventsResult
		outboxVerdict, cpuVerdict, latVerdict string
		outboxAim, cpuAim, latAim             bool
	}{
		{"not measured", nil, "not measured", "not measured", "not measured", false, false, false},
		{"within, aims met", &load.EventsResult{Latency: fine, Throughput: []load.WebhookThroughput{
			delivered("sqlite", 0.6), outbox("sqlite", 1, 0.99, 60), outbox("sqlite", 8, 0.98, 70), outbox("postgres", 1, 1.01, 75)}},
			"within", "within", "within", true, true, true},
		{"eight clients decide too", &load.EventsResult{Latency: fine, Throughput: []load.WebhookThroughput{
			outbox("sqlite", 1, 0.99, 60), outbox("postgres", 8, 0.94, 60)}},
			"over", "within", "within", false, true, true},
		{"within, aim missed; CPU over", &load.EventsResult{Latency: fine, Throughput: []load.WebhookThroughput{
			outbox("sqlite", 1, 0.96, 100), outbox("postgres", 1, 0.97, 160)}},
			"within", "over", "within", false, false, true},
		{"results of before: delivered only", &load.EventsResult{Latency: fine, Throughput: []load.WebhookThroughput{
			old(delivered("sqlite", 0.8))}},
			"not measured", "not measured", "within", false, false, true},
		{"p99 over", &load.EventsResult{Latency: &load.EventLatency{Events: 10, P50Ms: 30, P99Ms: 600}},
			"not measured", "not measured", "over", false, false, false},
		{"a payment never heard", &load.EventsResult{Latency: &load.EventLatency{Events: 10, Missing: 1, P50Ms: 10, P99Ms: 20}},
			"not measured", "not measured", "over", false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Events: tc.events}
			b := r.eventBudgets()
			if len(b) != 3 {
				t.Fatalf("%d budgets", len(b))
			}
			for i, want := range []struct {
				verdict string
				aim     bool
			}{{tc.outboxVerdict, tc.outboxAim}, {tc.cpuVerdict, tc.cpuAim}, {tc.latVerdict, tc.latAim}} {
				if b[i].Verdict != want.verdict || b[i].AimMet != want.aim {
					t.Errorf("%s: %s (aim %v), want %s (aim %v); measured %q", b[i].What, b[i].Verdict, b[i].AimMet, want.verdict, want.aim, b[i].Measured)
				}
			}
			var md strings.Builder
			r.eventsSection(&md)
			if tc.events != nil && len(tc.events.Throughput) > 0 && !strings.Contains(md.String(), "| sqlite | ") {
				t.Errorf("the section has no SQLite row:\n%s", md.String())
			}
		})
	}
}

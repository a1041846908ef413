package report

import (
	"fmt"
	"strings"
)

// eventBudgets are DESIGN's webhook lines. The outbox budget is judged
// on every cell (both stores, one and eight clients), the worst one; the
// figure with every event delivered on the same two cores is reported
// beside the CPU a delivery costs, which is what it measures.
func (r *Report) eventBudgets() []Budget {
	outbox := Budget{What: "webhooks on against off, events recorded (workers stopped): create-quote and execute, both stores, 1 and 8 clients", Limit: "≥ 0.95×", Aim: "≥ 0.98×",
		Verdict: "not measured"}
	cpu := Budget{What: "the service's CPU per delivered webhook", Limit: "≤ 150 µs", Aim: "≤ 80 µs", Verdict: "not measured"}
	latency := Budget{What: "event delivery, state change → browser, p50 / p99 (loopback)", Limit: "≤ 100 / 500 ms",
		Aim: "≤ 20 / 100 ms", Verdict: "not measured"}
	verdict := func(b *Budget, within, aim bool) {
		b.Verdict, b.AimMet = "over", false
		if within {
			b.Verdict, b.AimMet = "within", aim
		}
	}
	if r.Events != nil {
		worst, parts := 0.0, []string{}
		worstCPU, cpus := 0.0, []string{}
		var delivered []string
		for _, c := range r.Events.Throughput {
			switch measureOf(c.Measure) {
			case "outbox":
				if len(parts) == 0 || c.Ratio < worst {
					worst = c.Ratio
				}
				parts = append(parts, fmt.Sprintf("%s c=%d %s×", c.Store, c.Clients, num(c.Ratio)))
				if c.CPUPerDeliveryUs > 0 && c.Clients == 1 {
					// One drain per store: every outbox cell of it
					// carries the same figure.
					worstCPU = max(worstCPU, c.CPUPerDeliveryUs)
					cpu := fmt.Sprintf("%s %s µs", c.Store, num(c.CPUPerDeliveryUs))
					if c.SigningUs > 0 {
						cpu += fmt.Sprintf(" (its three signatures alone %s µs)", num(c.SigningUs))
					}
					cpus = append(cpus, cpu)
				}
			case "delivered":
				delivered = append(delivered, fmt.Sprintf("%s c=%d %s×", c.Store, c.Clients, num(c.Ratio)))
			}
		}
		if len(parts) > 0 {
			outbox.Measured = strings.Join(parts, "; ")
			verdict(&outbox, worst >= 0.95, worst >= 0.98)
		}
		if len(cpus) > 0 {
			cpu.Measured = strings.Join(cpus, "; ") + " (the bench process's CPU over a drain by the worker's code alone, the receiver in a process of its own)"
			if len(delivered) > 0 {
				cpu.Measured += "; on against off with every event delivered on the same two cores: " + strings.Join(delivered, "; ")
			}
			verdict(&cpu, worstCPU <= 150, worstCPU <= 80)
		}
		if l := r.Events.Latency; l != nil && l.Events > 0 {
			latency.Measured = num(l.P50Ms) + " / " + num(l.P99Ms) + " ms (an EventSource on the BFF's /api/events in Chromium)"
			verdict(&latency, l.P50Ms <= 100 && l.P99Ms <= 500 && l.Missing == 0, l.P50Ms <= 20 && l.P99Ms <= 100)
		}
	}
	return []Budget{outbox, cpu, latency}
}

// measureOf reads a cell's measure; results written before there were two
// measured only deliveries.
func measureOf(m string) string {
	if m == "" {
		return "delivered"
	}
	return m
}

// eventsSection is the table behind the webhook budgets.
func (r *Report) eventsSection(b *strings.Builder) {
	if r.Events == nil {
		return
	}
	var rows [][]string
	for _, c := range r.Events.Throughput {
		cpu := "–"
		if c.CPUPerDeliveryUs > 0 {
			cpu = num(c.CPUPerDeliveryUs)
			if c.SigningUs > 0 {
				cpu += " (signing " + num(c.SigningUs) + ")"
			}
		}
		rows = append(rows, []string{c.Store, fmt.Sprint(c.Clients), measureOf(c.Measure), num(c.Off.RPS), num(c.On.RPS), num(c.Ratio) + "×",
			num(c.Off.P50Ms) + " / " + num(c.On.P50Ms), fmt.Sprint(c.Delivered), cpu, fmt.Sprint(c.Off.Errors + c.On.Errors)})
	}
	section(b, "Webhooks on against off",
		"Create-quote then execute (one pair per call, the wallet's stamp made in the call) against one production-mode service, "+
			"off with its events paused (nothing recorded) and on delivering every event, signed, to a loopback receiver in a process of its own that answers 204; "+
			"off and on in alternation on the same database and customers, the collector run and the database's log checkpointed before every run. "+
			"In the delivered rows, after each on run the outbox is let empty and that time counts as on's, so on is what the service sustains with every event delivered, "+
			"the signing and the HTTP sharing the two cores with the calls. In the outbox rows the service's workers are stopped: on records its events "+
			"in the calls' own transactions and sends none, which is what recording events costs create-quote and execute; afterwards those events are "+
			"catalogued and delivered with nothing else running, and the process's CPU time over that drain per delivery is the CPU column.",
		[]string{"store", "clients", "measure", "off pairs/s", "on pairs/s", "on / off", "p50 ms off / on", "webhooks delivered", "CPU µs / delivery", "errors"}, rows)
	if l := r.Events.Latency; l != nil {
		fmt.Fprintf(b, "**State change → browser** (%s, the service delivering to the BFF's POST /webhooks/service, a headless Chromium page holding the BFF's "+
			"GET /api/events open with an EventSource, signed in with the session's cookie, as the wallet page does; latency = the time the page's EventSource delivered the event − the event's timestamp, "+
			"taken in the transaction just before it commits): %d payments %s apart, %d events, %d payments not heard; "+
			"p50 %s ms, p90 %s ms, p99 %s ms, max %s ms.\n\n",
			l.Store, l.Executes, "20 ms", l.Events, l.Missing, num(l.P50Ms), num(l.P90Ms), num(l.P99Ms), num(l.MaxMs))
	}
}

package report

import (
	"fmt"
	"strings"
)

// eventBudgets are DESIGN's two webhook lines. The throughput budget is
// judged on the one-client cells (the worst store), where nothing but the
// webhooks differs between the sides; with more clients than cores the
// load generator's share of the CPU blurs the comparison (the table shows
// those too).
func (r *Report) eventBudgets() []Budget {
	ratio := Budget{What: "webhooks on against off: create-quote and execute throughput, every event delivered (signed, over HTTP, on the same two cores)", Limit: "≥ 0.9×", Aim: "≥ 0.97×",
		Verdict: "not measured"}
	outbox := Budget{What: "webhooks on against off: the same, the outbox alone (events recorded in the calls' transactions, workers stopped)", Limit: "≥ 0.9×", Aim: "≥ 0.97×",
		Verdict: "not measured"}
	latency := Budget{What: "event delivery, state change → browser, p50 / p99 (loopback)", Limit: "≤ 100 / 500 ms",
		Aim: "≤ 20 / 100 ms", Verdict: "not measured"}
	verdict := func(b *Budget, within, aim bool) {
		b.Verdict, b.AimMet = "over", false
		if within {
			b.Verdict, b.AimMet = "within", aim
		}
	}
	if r.Events != nil {
		for _, m := range []struct {
			b       *Budget
			measure string
		}{{&ratio, "delivered"}, {&outbox, "outbox"}} {
			worst, parts := 0.0, []string{}
			for _, c := range r.Events.Throughput {
				if c.Clients != 1 || measureOf(c.Measure) != m.measure {
					continue
				}
				if len(parts) == 0 || c.Ratio < worst {
					worst = c.Ratio
				}
				parts = append(parts, fmt.Sprintf("%s %s× (%s against %s pairs/s)", c.Store, num(c.Ratio), num(c.On.RPS), num(c.Off.RPS)))
			}
			if len(parts) > 0 {
				m.b.Measured = strings.Join(parts, "; ") + ", one client"
				verdict(m.b, worst >= 0.9, worst >= 0.97)
			}
		}
		if l := r.Events.Latency; l != nil && l.Events > 0 {
			latency.Measured = num(l.P50Ms) + " / " + num(l.P99Ms) + " ms (an EventSource on the BFF's /api/events in Chromium)"
			verdict(&latency, l.P50Ms <= 100 && l.P99Ms <= 500 && l.Missing == 0, l.P50Ms <= 20 && l.P99Ms <= 100)
		}
	}
	return []Budget{ratio, outbox, latency}
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
		rows = append(rows, []string{c.Store, fmt.Sprint(c.Clients), measureOf(c.Measure), num(c.Off.RPS), num(c.On.RPS), num(c.Ratio) + "×",
			num(c.Off.P50Ms) + " / " + num(c.On.P50Ms), fmt.Sprint(c.Delivered), fmt.Sprint(c.Off.Errors + c.On.Errors)})
	}
	section(b, "Webhooks on against off",
		"Create-quote then execute (one pair per call, the wallet's stamp made in the call) against two production-mode services side by side, "+
			"one without a webhook endpoint and one delivering every event, signed, to a loopback receiver that answers 204; off and on in alternation. "+
			"In the delivered rows, after each on run the outbox is let empty and that time counts as on's, so on is what the service sustains with every event delivered, "+
			"the signing, the HTTP and the receiver sharing the two cores with the calls. In the outbox rows both services' workers are stopped: on records its events "+
			"in the calls' own transactions and sends none, which is what the outbox itself costs create-quote and execute.",
		[]string{"store", "clients", "measure", "off pairs/s", "on pairs/s", "on / off", "p50 ms off / on", "webhooks delivered", "errors"}, rows)
	if l := r.Events.Latency; l != nil {
		fmt.Fprintf(b, "**State change → browser** (%s, the service delivering to the BFF's POST /webhooks/service, a headless Chromium page holding the BFF's "+
			"GET /api/events open with an EventSource, signed in with the session's cookie, as the wallet page does; latency = the time the page's EventSource delivered the event − the event's timestamp, "+
			"taken in the transaction just before it commits): %d payments %s apart, %d events, %d payments not heard; "+
			"p50 %s ms, p90 %s ms, p99 %s ms, max %s ms.\n\n",
			l.Store, l.Executes, "20 ms", l.Events, l.Missing, num(l.P50Ms), num(l.P90Ms), num(l.P99Ms), num(l.MaxMs))
	}
}

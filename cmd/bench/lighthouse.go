package main

import (
	"context"

	"paywallet/internal/bench/lighthouse"
	"paywallet/internal/bench/pageload"
	"paywallet/internal/bench/report"
)

// lighthouseReports is where Lighthouse's own HTML and JSON reports go:
// the details behind the scores, too big to commit (artifacts/ is ignored).
const lighthouseReports = "artifacts/lighthouse"

// pageLoadTraces is where the page loads' traces go, to open in DevTools'
// Performance panel (artifacts/ is ignored).
const pageLoadTraces = "artifacts/pageload"

// runPageLoad loads the real page four times on a phone with the CPU
// slowed and traces each load (internal/bench/pageload). Like Lighthouse it
// runs after the load steps, on a quiet machine: a trace's task lengths are
// this machine's CPU time, slowed.
func runPageLoad(ctx context.Context, r *report.Report, logf func(string, ...any), fail func(string, error)) {
	logf("pageload: the real page's loads, traced, on a phone with the CPU slowed 4×; and the second visit")
	res, err := pageload.Run(ctx, pageload.Options{Log: logf, TraceDir: pageLoadTraces})
	if res != nil && len(res.Loads) > 0 {
		r.PageLoad = res
	}
	if err != nil {
		fail("pageload", err)
	}
}

// runLighthouse is the last step: Lighthouse (bench/lighthouse, pinned) on
// the sign-in page and the signed-in Home and Send, as a phone and as a
// desktop. It runs after
// the load steps, when nothing else uses the CPU: Lighthouse's simulated
// throttling scales the main-thread work it observes on this machine.
func runLighthouse(ctx context.Context, r *report.Report, quick bool, logf func(string, ...any), fail func(string, error)) {
	logf("lighthouse: the sign-in page and the signed-in Home and Send in Chromium, mobile and desktop")
	res, err := lighthouse.Run(ctx, lighthouse.Options{Quick: quick, Log: logf, ReportDir: lighthouseReports})
	if res != nil && len(res.Runs) > 0 {
		r.Lighthouse = res
	}
	if err != nil {
		fail("lighthouse", err)
	}
}

package main

import (
	"context"

	"paywallet/internal/bench/lighthouse"
	"paywallet/internal/bench/report"
)

// lighthouseReports is where Lighthouse's own HTML and JSON reports go:
// the details behind the scores, too big to commit (artifacts/ is ignored).
const lighthouseReports = "artifacts/lighthouse"

// runLighthouse is the last step: Lighthouse (bench/lighthouse, pinned) on
// the signed-in Home and Send, as a phone and as a desktop. It runs after
// the load steps, when nothing else uses the CPU: Lighthouse's simulated
// throttling scales the main-thread work it observes on this machine.
func runLighthouse(ctx context.Context, r *report.Report, quick bool, logf func(string, ...any), fail func(string, error)) {
	logf("lighthouse: the signed-in Home and Send in Chromium, mobile and desktop")
	res, err := lighthouse.Run(ctx, lighthouse.Options{Quick: quick, Log: logf, ReportDir: lighthouseReports})
	if res != nil && len(res.Runs) > 0 {
		r.Lighthouse = res
	}
	if err != nil {
		fail("lighthouse", err)
	}
}

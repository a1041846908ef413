package report

import (
	"strings"
	"testing"

	"paywallet/internal/bench/lighthouse"
)

// TestLighthouseSection: the scores are in a table with the ones under the
// goal in bold, the audits that cost points are listed, and a report
// without Lighthouse figures has no such section.
func TestLighthouseSection(t *testing.T) {
	r := &Report{Lighthouse: &lighthouse.Result{Version: "12.8.2", Chromium: "Chrome/156", Reports: "artifacts/lighthouse", Runs: []lighthouse.PageResult{{
		Page: "Home", Path: "/", FormFactor: "mobile", BenchmarkIndex: 1200,
		Scores:  map[string]int{"performance": 58, "accessibility": 100},
		Metrics: lighthouse.Metrics{FCPMs: 2277, LCPMs: 2436, TBTMs: 12966, CLS: 0.066, SpeedIndexMs: 6894, Bytes: 1055000},
		Failing: []lighthouse.Audit{{Category: "performance", ID: "total-blocking-time", Title: "Total Blocking Time", Score: 0, Weight: 30, Value: "12,970 ms"}},
	}}}}
	md := r.Markdown("")
	for _, want := range []string{
		"## Lighthouse: the signed-in Home and Send",
		"Lighthouse 12.8.2 (npm, pinned in bench/lighthouse) against Chrome/156",
		"| Home (`/`) | mobile | **58** | 100 | – | 2277 | 2436 | 12966 | 0.066 | 6894 | 1055 | 1200 |",
		"`artifacts/lighthouse/*.report.html`",
		"- Home, mobile, performance: `total-blocking-time` Total Blocking Time (score 0, weight 30.0): 12,970 ms",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if md := (&Report{}).Markdown(""); strings.Contains(md, "Lighthouse") {
		t.Errorf("a report without Lighthouse figures mentions it:\n%s", md)
	}
}

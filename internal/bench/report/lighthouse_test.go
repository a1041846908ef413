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
		Page: "Home", Path: "/", SignedIn: true, FormFactor: "mobile", BenchmarkIndex: 1200,
		Scores:  map[string]int{"performance": 58, "accessibility": 100},
		Metrics: lighthouse.Metrics{FCPMs: 2277, LCPMs: 2436, TBTMs: 12966, CLS: 0.066, SpeedIndexMs: 6894, Bytes: 1055000},
		Failing: []lighthouse.Audit{{Category: "performance", ID: "total-blocking-time", Title: "Total Blocking Time", Score: 0, Weight: 30, Value: "12,970 ms"}},
	}}}}
	md := r.Markdown("")
	for _, want := range []string{
		"## Lighthouse: the sign-in page, Home and Send",
		"Lighthouse 12.8.2 (npm, pinned in bench/lighthouse) against Chrome/156",
		"| Home (`/`, signed in) | mobile | **58** | 100 | – | 2277 | 2436 | 12966 | 0.066 | 6894 | 1055 | 1200 |",
		"`artifacts/lighthouse/*.report.html`",
		"- Home, mobile, performance: `total-blocking-time` Total Blocking Time (score 0, weight 30.0): 12,970 ms",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if md := (&Report{}).Markdown(""); strings.Contains(md, "## Lighthouse") {
		t.Errorf("a report without Lighthouse figures has their section:\n%s", md)
	}
}

// TestLighthouseBudgets: the worst view decides each Lighthouse line, and a
// view not audited leaves the line not measured.
func TestLighthouseBudgets(t *testing.T) {
	run := func(page, ff string, perf, a11y int, tbt float64) lighthouse.PageResult {
		return lighthouse.PageResult{Page: page, FormFactor: ff, Metrics: lighthouse.Metrics{TBTMs: tbt},
			Scores: map[string]int{"performance": perf, "accessibility": a11y, "best-practices": 100}}
	}
	all := func(mobileSend, desktopHome, a11y int, tbt float64) []lighthouse.PageResult {
		return []lighthouse.PageResult{
			run("Sign-in", "mobile", 99, 100, 20), run("Sign-in", "desktop", 100, 100, 0),
			run("Home", "mobile", 97, 100, 60), run("Home", "desktop", desktopHome, a11y, 0),
			run("Send", "mobile", mobileSend, 100, tbt), run("Send", "desktop", 100, 100, 0),
		}
	}
	cases := []struct {
		name string
		runs []lighthouse.PageResult
		want map[string]string // budget prefix -> verdict (with "; aim met")
	}{
		{"within", all(96, 99, 100, 100), map[string]string{"Lighthouse mobile": "within", "Lighthouse desktop": "within", "Lighthouse accessibility": "within; aim met"}},
		{"mobile TBT over", all(96, 99, 100, 151), map[string]string{"Lighthouse mobile": "over", "Lighthouse desktop": "within"}},
		{"mobile score over", all(94, 99, 100, 10), map[string]string{"Lighthouse mobile": "over"}},
		{"desktop over, a11y over", all(96, 97, 98, 10), map[string]string{"Lighthouse desktop": "over", "Lighthouse accessibility": "over"}},
		{"a view missing", all(96, 99, 100, 10)[2:], map[string]string{"Lighthouse mobile": "not measured", "Lighthouse desktop": "not measured", "Lighthouse accessibility": "within; aim met"}},
	}
	for _, c := range cases {
		r := &Report{Lighthouse: &lighthouse.Result{Runs: c.runs}}
		for _, b := range r.lighthouseBudgets() {
			for prefix, want := range c.want {
				if !strings.HasPrefix(b.What, prefix) {
					continue
				}
				got := b.Verdict
				if b.AimMet {
					got += "; aim met"
				}
				if got != want {
					t.Errorf("%s: %s is %q (%s), want %q", c.name, b.What, got, b.Measured, want)
				}
			}
		}
	}
}

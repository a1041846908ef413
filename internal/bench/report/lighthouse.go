package report

import (
	"fmt"
	"slices"
	"strings"

	"paywallet/internal/bench/lighthouse"
)

// lighthouseSection renders the Lighthouse scores of the sign-in page and
// the signed-in views beside the goal (95 or more in each category; the
// budgets are in the budget table), the metrics
// behind the performance score, and the audits that cost points, so that
// the report says what to fix and not only how far off it is.
func (r *Report) lighthouseSection(b *strings.Builder) {
	l := r.Lighthouse
	if l == nil || len(l.Runs) == 0 {
		return
	}
	var rows [][]string
	for _, run := range l.Runs {
		state := "signed out"
		if run.SignedIn {
			state = "signed in"
		}
		row := []string{run.Page + " (`" + run.Path + "`, " + state + ")", run.FormFactor}
		for _, c := range lighthouse.Categories {
			row = append(row, scoreCell(run.Scores, c))
		}
		m := run.Metrics
		row = append(row, num(m.FCPMs), num(m.LCPMs), num(m.TBTMs), fmt.Sprintf("%.3f", m.CLS), num(m.SpeedIndexMs), num(m.Bytes/1000), num(run.BenchmarkIndex))
		rows = append(rows, row)
	}
	intro := fmt.Sprintf("Lighthouse %s (npm, pinned in bench/lighthouse) against %s: the sign-in page before the browser signs in, then the signed-in views (the session key in the profile's IndexedDB and the cookie kept with `--disable-storage-reset`), with the HTTP cache emptied before each run. "+
		"Goal: %d or more in each category; a score below it is in bold. Mobile is Lighthouse's default, a mid-range phone on slow 4G with a 4× slower CPU, "+
		"simulated from a load on this machine; desktop is its desktop preset. Times in ms, transfer in kB. "+
		"CPU index is Lighthouse's benchmark of this machine during the run: its simulation assumes about 1000 or more, and a busy machine scores less and lowers the performance score.",
		l.Version, orDash(l.Chromium), lighthouse.Goal)
	section(b, "Lighthouse: the sign-in page, Home and Send", intro,
		[]string{"view", "as", "performance", "accessibility", "best practices", "FCP", "LCP", "TBT", "CLS", "Speed Index", "kB", "CPU index"}, rows)

	if l.Reports != "" {
		fmt.Fprintf(b, "Lighthouse's own reports of these runs, with the details behind each score: `%s/*.report.html` (not committed).\n\n", l.Reports)
	}
	var lost []string
	for _, run := range l.Runs {
		for _, a := range run.Failing {
			line := fmt.Sprintf("- %s, %s, %s: `%s` %s (score %s, weight %s)", run.Page, run.FormFactor, a.Category, a.ID, a.Title, num(a.Score), num(a.Weight))
			if a.Value != "" {
				line += ": " + a.Value
			}
			lost = append(lost, line)
		}
		for _, w := range run.Warnings {
			lost = append(lost, fmt.Sprintf("- %s, %s: %s", run.Page, run.FormFactor, w))
		}
	}
	if len(lost) > 0 {
		b.WriteString("Audits that cost points, heaviest first:\n\n" + strings.Join(lost, "\n") + "\n\n")
	}
}

// scoreCell is a category's score, in bold when under the goal.
func scoreCell(scores map[string]int, category string) string {
	s, ok := scores[category]
	switch {
	case !ok:
		return "–"
	case s < lighthouse.Goal:
		return fmt.Sprintf("**%d**", s)
	}
	return fmt.Sprint(s)
}

// lighthouseBudgets are DESIGN.md's Lighthouse lines: mobile performance
// and TBT of the sign-in page, Home and Send; desktop performance of the
// same; accessibility and best practices of every view audited. The worst
// view decides; a view not audited leaves its line not measured.
func (r *Report) lighthouseBudgets() []Budget {
	runs := map[string]lighthouse.PageResult{} // "Home/mobile"
	var views []string
	if l := r.Lighthouse; l != nil {
		for _, run := range l.Runs {
			runs[run.Page+"/"+run.FormFactor] = run
			if !slices.Contains(views, run.Page) {
				views = append(views, run.Page)
			}
		}
	}
	want := []string{"Sign-in", "Home", "Send"}
	line := func(what, limit, aim string, ff string, ok func(lighthouse.PageResult) (string, bool, bool)) Budget {
		b := Budget{What: what, Limit: limit, Aim: aim, Verdict: "not measured"}
		var parts []string
		within, aimMet := true, true
		for _, v := range want {
			run, found := runs[v+"/"+ff]
			if !found {
				return b
			}
			text, in, aimed := ok(run)
			parts = append(parts, v+" "+text)
			within, aimMet = within && in, aimMet && aimed
		}
		b.Measured = strings.Join(parts, "; ")
		b.Verdict, b.AimMet = "over", false
		if within {
			b.Verdict, b.AimMet = "within", aimMet
		}
		return b
	}
	out := []Budget{
		line("Lighthouse mobile performance; TBT (sign-in, Home and Send signed in)", fmt.Sprintf("≥ %d; ≤ %d ms", lighthouse.BudgetMobile, lighthouse.BudgetMobileTBTMs), "100; ≤ 50 ms", "mobile",
			func(run lighthouse.PageResult) (string, bool, bool) {
				score, tbt := run.Scores["performance"], run.Metrics.TBTMs
				return fmt.Sprintf("%d; %s ms", score, num(tbt)), score >= lighthouse.BudgetMobile && tbt <= lighthouse.BudgetMobileTBTMs, score >= 100 && tbt <= 50
			}),
		line("Lighthouse desktop performance (sign-in, Home and Send signed in)", fmt.Sprintf("≥ %d", lighthouse.BudgetDesktop), "100", "desktop",
			func(run lighthouse.PageResult) (string, bool, bool) {
				score := run.Scores["performance"]
				return fmt.Sprint(score), score >= lighthouse.BudgetDesktop, score >= 100
			}),
	}
	// Accessibility and best practices: every run of every view.
	b := Budget{What: "Lighthouse accessibility and best practices, every view and form factor", Limit: "100", Aim: "100", Verdict: "not measured"}
	if r.Lighthouse != nil && len(r.Lighthouse.Runs) > 0 {
		worst := map[string]int{"accessibility": 100, "best-practices": 100}
		var below []string
		for _, run := range r.Lighthouse.Runs {
			for c := range worst {
				s, ok := run.Scores[c]
				if !ok {
					s = 0
				}
				worst[c] = min(worst[c], s)
				if s < lighthouse.BudgetOther {
					below = append(below, fmt.Sprintf("%s %s %s %d", run.Page, run.FormFactor, c, s))
				}
			}
		}
		slices.Sort(below)
		b.Measured = fmt.Sprintf("lowest accessibility %d, best practices %d over %d runs (%s)", worst["accessibility"], worst["best-practices"], len(r.Lighthouse.Runs), strings.Join(views, ", "))
		if len(below) > 0 {
			b.Measured += ": " + strings.Join(below, ", ")
		}
		b.Verdict, b.AimMet = "within", true
		if len(below) > 0 {
			b.Verdict, b.AimMet = "over", false
		}
	}
	return append(out, b)
}

package report

import (
	"fmt"
	"strings"

	"paywallet/internal/bench/lighthouse"
)

// lighthouseSection renders the Lighthouse scores of the signed-in views
// beside the goal (issue 16: 95 or more in each category), the metrics
// behind the performance score, and the audits that cost points, so that
// the report says what to fix and not only how far off it is.
func (r *Report) lighthouseSection(b *strings.Builder) {
	l := r.Lighthouse
	if l == nil || len(l.Runs) == 0 {
		return
	}
	var rows [][]string
	for _, run := range l.Runs {
		row := []string{run.Page + " (`" + run.Path + "`)", run.FormFactor}
		for _, c := range lighthouse.Categories {
			row = append(row, scoreCell(run.Scores, c))
		}
		m := run.Metrics
		row = append(row, num(m.FCPMs), num(m.LCPMs), num(m.TBTMs), fmt.Sprintf("%.3f", m.CLS), num(m.SpeedIndexMs), num(m.Bytes/1000), num(run.BenchmarkIndex))
		rows = append(rows, row)
	}
	intro := fmt.Sprintf("Lighthouse %s (npm, pinned in bench/lighthouse) against %s, signed in (the session key in the profile's IndexedDB and the cookie kept with `--disable-storage-reset`), with the HTTP cache emptied before each run. "+
		"Goal: %d or more in each category; a score below it is in bold. Mobile is Lighthouse's default, a mid-range phone on slow 4G with a 4× slower CPU, "+
		"simulated from a load on this machine; desktop is its desktop preset. Times in ms, transfer in kB. "+
		"CPU index is Lighthouse's benchmark of this machine during the run: its simulation assumes about 1000 or more, and a busy machine scores less and lowers the performance score.",
		l.Version, orDash(l.Chromium), lighthouse.Goal)
	section(b, "Lighthouse: the signed-in Home and Send", intro,
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

package report

import (
	"fmt"
	"strings"
)

// ledgerBudget is DESIGN's `ledger verify` line: the entries per second
// BenchmarkVerifyLedger measured on SQLite books of about 10^6 entries
// (service/store/sqlstore).
func (r *Report) ledgerBudget() Budget {
	b := Budget{What: "`ledger verify` on SQLite, 10^6 entries (entries/s)", Limit: "≥ 1e5 entries/s", Aim: "≥ 1e6 entries/s",
		Verdict: "not measured"}
	rate, entries, ok := r.ledgerRate()
	if !ok {
		return b
	}
	b.Measured = fmt.Sprintf("%s entries/s (%s entries, %s s per verification)", grouped(int64(rate)), grouped(int64(entries)), num(r.Ledger.NsPerOp/1e9))
	b.Verdict, b.AimMet = "over", false
	if rate >= 1e5 {
		b.Verdict, b.AimMet = "within", rate >= 1e6
	}
	return b
}

func (r *Report) ledgerRate() (rate, entries float64, ok bool) {
	if r.Ledger == nil {
		return 0, 0, false
	}
	rate, ok = r.Ledger.Metrics["entries/s"]
	return rate, r.Ledger.Metrics["entries"], ok && rate > 0
}

func (r *Report) ledgerSection(b *strings.Builder) {
	rate, entries, ok := r.ledgerRate()
	if !ok {
		return
	}
	fmt.Fprintf(b, "## The books\n\n`ledger verify` (BenchmarkVerifyLedger): SQLite books of %s entries "+
		"(wallets funded, then payouts completed: a HOLD and a POST each, all sealed) verified in %s s, %s entries/s: "+
		"the chain recomputed, every transaction, balance and payment checked.\n\n",
		grouped(int64(entries)), num(r.Ledger.NsPerOp/1e9), grouped(int64(rate)))
}

package seclog

import "fmt"

// Row is a stored record with its place in the chain, as the verifier
// reads it.
type Row struct {
	Record
	Seq            int64
	PrevHash, Hash string
}

// Problem is a record that does not verify, named by its id.
type Problem struct {
	ID   string
	What string
}

func (p *Problem) Error() string { return "security_events " + p.ID + ": " + p.What }

// MaxProblems bounds the problems a Report keeps (it counts them all).
const MaxProblems = 100

// Report is what a verification of the security log checked and found.
type Report struct {
	Records, Customers int64
	Problems           []Problem
	ProblemCount       int64
}

// Err is the first problem, or nil when every chain verifies.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return &r.Problems[0]
}

// Verifier recomputes the customers' chains from their rows, fed in the
// order (customer id, seq). It catches a record whose fields were changed
// (its hash no longer follows), one removed from the middle or added (a
// gap or a repeat in seq, and the next record's prev_hash), and records
// moved between places (their links differ). A removal of a customer's
// newest records leaves a shorter chain that verifies: only a head kept
// elsewhere would tell.
type Verifier struct {
	report   Report
	customer string
	seq      int64
	link     string
}

// Add checks the next row.
func (v *Verifier) Add(r *Row) {
	v.report.Records++
	if r.CustomerID != v.customer || v.report.Records == 1 {
		v.report.Customers++
		v.customer, v.seq, v.link = r.CustomerID, 0, Zero
	}
	if r.Seq != v.seq+1 {
		v.problem(r.ID, "seq %d follows seq %d of the customer's chain: a record is missing or out of place", r.Seq, v.seq)
	}
	if r.PrevHash != v.link {
		v.problem(r.ID, "prev_hash %s is not the hash of the record before (%s)", r.PrevHash, v.link)
	}
	want, _ := Next(v.link, r.Seq, &r.Record)
	if r.Hash != want {
		v.problem(r.ID, "hash %s differs from the one recomputed from the record (%s): the record was changed", r.Hash, want)
	}
	// Go on from the stored link, so that one bad record is named once
	// rather than every record after it.
	v.seq, v.link = r.Seq, r.Hash
}

func (v *Verifier) problem(id, format string, args ...any) {
	v.report.ProblemCount++
	if len(v.report.Problems) < MaxProblems {
		v.report.Problems = append(v.report.Problems, Problem{ID: id, What: fmt.Sprintf(format, args...)})
	}
}

// Finish is the report.
func (v *Verifier) Finish() Report { return v.report }

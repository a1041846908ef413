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
	// Heads are the customers' newest records: kept elsewhere and given
	// back as anchors to a later verification (Verifier.Anchors), they
	// catch what the chains alone cannot, the removal of a customer's
	// newest records (or of the whole log).
	Heads map[string]Head
}

// Head is a place in a customer's chain: a record's seq and hash.
type Head struct {
	Sequence int64  `json:"sequence"`
	Hash     string `json:"hash"`
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
	// Anchors, when set, are heads of an earlier verification: each
	// customer's chain must still have that record, with that hash.
	Anchors map[string]Head

	report   Report
	customer string
	seq      int64
	link     string
	lastID   string
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
	if a, ok := v.Anchors[r.CustomerID]; ok && a.Sequence == r.Seq && a.Hash != r.Hash {
		v.problem(r.ID, "hash %s is not the %s an earlier verification recorded for seq %d: the record was replaced", r.Hash, a.Hash, r.Seq)
	}
	if v.report.Heads == nil {
		v.report.Heads = map[string]Head{}
	}
	v.report.Heads[r.CustomerID] = Head{Sequence: r.Seq, Hash: r.Hash}
	// Go on from the stored link, so that one bad record is named once
	// rather than every record after it.
	v.seq, v.link, v.lastID = r.Seq, r.Hash, r.ID
}

func (v *Verifier) problem(id, format string, args ...any) {
	v.report.ProblemCount++
	if len(v.report.Problems) < MaxProblems {
		v.report.Problems = append(v.report.Problems, Problem{ID: id, What: fmt.Sprintf(format, args...)})
	}
}

// Finish is the report: with anchors, a customer whose chain ends before
// its anchor lost its newest records.
func (v *Verifier) Finish() Report {
	for customer, a := range v.Anchors {
		if h, ok := v.report.Heads[customer]; !ok || h.Sequence < a.Sequence {
			v.problem(customer, "the chain ends at seq %d, but an earlier verification recorded seq %d (%s): its newest records were removed",
				h.Sequence, a.Sequence, a.Hash)
		}
	}
	return v.report
}

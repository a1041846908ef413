package seclog

import (
	"testing"
	"time"
)

// TestChainVector pins the construction to links computed by an
// independent implementation (a few lines of Python with hashlib, from the
// package comment alone), so a change of the form is a test failure, not
// a silent fork of every customer's chain.
func TestChainVector(t *testing.T) {
	r1 := &Record{ID: "SecurityEvent:0190a000-0000-7000-8000-000000000001", CustomerID: "Customer:0190a000-0000-7000-8000-000000000002",
		Type: "SIGNED_IN", Details: []byte(`{"device":"Chrome on Android","method":"PASSKEY"}`), CreatedAt: time.UnixMicro(1700000000123456)}
	r2 := &Record{ID: "SecurityEvent:0190a000-0000-7000-8000-000000000003", CustomerID: r1.CustomerID,
		AccountID: "InternalAccount:0190a000-0000-7000-8000-000000000004", Type: "SESSION_REVOKED",
		Details: []byte(`{"by":"YOU","sessionId":"Session:x"}`), CreatedAt: time.UnixMicro(1700000060000000)}
	l1, ok := Next("", 1, r1)
	if !ok || l1 != "7bcbd5b8692114779cce8d76a6e0514523663c7cf0e4da397f3bf3aca233a413" {
		t.Fatalf("link 1 = %s", l1)
	}
	l2, _ := Next(l1, 2, r2)
	if l2 != "b27a1584d30837ba2f9d3ae77a411a8b2878d3b4ee38bf520eeef3bf6822f12e" {
		t.Fatalf("link 2 = %s", l2)
	}
	if _, ok := Next("xyz", 2, r2); ok {
		t.Fatal("a malformed previous link was accepted")
	}
}

// TestVerifier: the chain as written verifies; a changed field, a record
// taken out of the middle and two records swapped are each named.
func TestVerifier(t *testing.T) {
	build := func(n int) []Row {
		var rows []Row
		prev := Zero
		for i := 1; i <= n; i++ {
			r := Row{Record: Record{ID: "SecurityEvent:" + string(rune('a'+i)), CustomerID: "Customer:1", Type: "SIGNED_IN",
				Details: []byte(`{}`), CreatedAt: time.UnixMicro(int64(i))}, Seq: int64(i), PrevHash: prev}
			r.Hash, _ = Next(prev, r.Seq, &r.Record)
			prev = r.Hash
			rows = append(rows, r)
		}
		return rows
	}
	run := func(rows []Row) Report {
		var v Verifier
		for i := range rows {
			v.Add(&rows[i])
		}
		return v.Finish()
	}
	if r := run(build(4)); r.Err() != nil || r.Records != 4 || r.Customers != 1 {
		t.Fatalf("clean: %+v", r)
	}
	cases := []struct {
		name  string
		edit  func([]Row) []Row
		first string // the id the first problem names
	}{
		{"changed details", func(r []Row) []Row { r[1].Details = []byte(`{"x":1}`); return r }, r2id},
		{"changed type", func(r []Row) []Row { r[2].Type = "SIGN_IN_FAILED"; return r }, "SecurityEvent:d"},
		{"missing", func(r []Row) []Row { return append(r[:1], r[2:]...) }, "SecurityEvent:d"},
		{"reordered", func(r []Row) []Row {
			r[1], r[2] = r[2], r[1]
			r[1].Seq, r[2].Seq = 2, 3
			return r
		}, "SecurityEvent:d"},
	}
	for _, c := range cases {
		r := run(c.edit(build(4)))
		if r.ProblemCount == 0 || r.Problems[0].ID != c.first {
			t.Errorf("%s: %+v", c.name, r.Problems)
		}
	}
}

const r2id = "SecurityEvent:c"

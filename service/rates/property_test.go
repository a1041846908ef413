package rates

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// leastBySearch is the least sending amount that delivers want, found by
// bisection on the forward formula alone, so that it checks the closed form
// rather than repeats it. 2^80 bounds the search with room to spare: the
// dearest receiving unit of the table, a satoshi, costs about 400 of the
// cheapest sending unit, a Colombian centavo, so MaxInt64 satoshis cost
// less than 2^72 centavos.
func leastBySearch(k *corridor, want *big.Int) *big.Int {
	lo, hi := big.NewInt(1), new(big.Int).Lsh(big1, 80)
	for lo.Cmp(hi) < 0 {
		mid := new(big.Int).Add(lo, hi)
		mid.Rsh(mid, 1)
		if k.delivers(mid, want) {
			hi = mid
		} else {
			lo = mid.Add(mid, big1)
		}
	}
	return lo
}

// forwardR is the forward receiving amount of s, or -1 when s delivers
// nothing, the limits aside.
func forwardR(k *corridor, s int64) *big.Int {
	_, _, r, ok := k.forward(big.NewInt(s))
	if !ok {
		return big.NewInt(-1)
	}
	return r
}

// checkQuote quotes req and checks every property a quote must have.
func checkQuote(t *testing.T, src *Source, req Request) {
	t.Helper()
	k := src.corridors[[2]string{req.Sending, req.Receiving}]
	from := k.from
	q, err := src.Quote(req)

	if err != nil {
		var ae *AmountError
		if !errors.As(err, &ae) {
			t.Fatalf("%+v: error %v is not an AmountError", req, err)
		}
		if ae.Max != from.max || ae.Min < from.min || ae.Error() == "" {
			t.Fatalf("%+v: %#v", req, ae)
		}
		switch {
		case req.Amount <= 0:
		case req.Side == SideSending:
			if req.Amount >= from.min && req.Amount <= from.max && forwardR(k, req.Amount).Sign() > 0 {
				t.Fatalf("%+v: %v, but the amount is in range and delivers %v", req, err, forwardR(k, req.Amount))
			}
		default:
			s := leastBySearch(k, big.NewInt(req.Amount))
			if s.IsInt64() && s.Int64() >= from.min && s.Int64() <= from.max {
				t.Fatalf("%+v: %v, but %v delivers it within the limits", req, err, s)
			}
		}
		return
	}

	if req.Amount <= 0 {
		t.Fatalf("%+v: quoted %+v", req, q)
	}
	if q.TotalSending < from.min || q.TotalSending > from.max {
		t.Fatalf("%+v: sending %d outside %d..%d", req, q.TotalSending, from.min, from.max)
	}
	if q.TotalReceiving <= 0 || q.FeesIncluded < 0 || q.ReceivingFees < 0 || q.Details.ServiceVariableFeeAmount < 0 {
		t.Fatalf("%+v: %+v", req, q)
	}
	if q.FeesIncluded < from.fixedFee+q.Details.ServiceVariableFeeAmount || q.ReceivingFees < k.to.payoutFee {
		t.Fatalf("%+v: fees %d/%d below their parts", req, q.FeesIncluded, q.ReceivingFees)
	}
	s := q.TotalSending
	r := forwardR(k, s)
	if req.Side == SideSending {
		if s != req.Amount || r.Int64() != q.TotalReceiving {
			t.Fatalf("%+v: %+v, forward %v", req, q, r)
		}
		// Non-decreasing in S around the amount.
		if forwardR(k, s-1).Cmp(r) > 0 || (s < math.MaxInt64 && forwardR(k, s+1).Cmp(r) < 0) {
			t.Fatalf("%+v: forward decreases near %d: %v %v %v", req, s, forwardR(k, s-1), r, forwardR(k, s+1))
		}
		return
	}
	// Locked receiving: exactly R, and S is the least that delivers it (S
	// delivers R and S − 1 does not; forward is non-decreasing, so no
	// smaller S does either).
	want := big.NewInt(req.Amount)
	if q.TotalReceiving != req.Amount || r.Cmp(want) < 0 || forwardR(k, s-1).Cmp(want) >= 0 {
		t.Fatalf("%+v: sending %d delivers %v, %d delivers %v", req, s, r, s-1, forwardR(k, s-1))
	}
}

// amounts are the amounts to try on a corridor: the edges of its limits,
// its least useful amount, powers of ten and random ones up to 9e15.
func amounts(rng *rand.Rand, k *corridor) []int64 {
	out := []int64{-1, 0, 1, 2, 99, 100, 101, 9e15, math.MaxInt64, math.MaxInt64 - 1,
		k.from.min - 1, k.from.min, k.from.min + 1, k.from.max - 1, k.from.max, k.from.max + 1}
	if k.least.IsInt64() {
		l := k.least.Int64()
		out = append(out, l-1, l, l+1)
	}
	for p := int64(1); p <= 1e15; p *= 10 {
		out = append(out, p, 3*p, p-1)
	}
	for range 12 {
		out = append(out, rng.Int64N(2*k.from.max)+1, rng.Int64N(9e15)+1, rng.Int64N(1e6)+1)
	}
	return out
}

// TestProperties runs checkQuote over every corridor of the embedded table
// at many amounts, both sides.
func TestProperties(t *testing.T) {
	src := Default()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for key, k := range src.corridors {
		for _, a := range amounts(rng, k) {
			for _, side := range []Side{SideSending, SideReceiving} {
				checkQuote(t, src, Request{Sending: key[0], Receiving: key[1], Side: side, Amount: a})
				n++
			}
		}
	}
	t.Logf("%d quotes checked", n)
}

// TestMonotonic walks runs of consecutive sending amounts on every corridor:
// the forward receiving amount never decreases as S grows.
func TestMonotonic(t *testing.T) {
	src := Default()
	rng := rand.New(rand.NewPCG(3, 4))
	for key, k := range src.corridors {
		for _, start := range []int64{1, k.from.min, rng.Int64N(k.from.max), k.from.max - 300} {
			prev := forwardR(k, start)
			for s := start + 1; s < start+300; s++ {
				r := forwardR(k, s)
				if r.Cmp(prev) < 0 {
					t.Fatalf("%s→%s: forward(%d) = %v < forward(%d) = %v", key[0], key[1], s, r, s-1, prev)
				}
				prev = r
			}
		}
	}
}

// TestClosedFormIsExact: inverse never has to step away from the closed
// form, so a receiving quote costs O(1) big-integer operations.
func TestClosedFormIsExact(t *testing.T) {
	src := Default()
	rng := rand.New(rand.NewPCG(5, 6))
	for key, k := range src.corridors {
		for _, want := range []int64{1, 2, 3, 10, 999, 1e6, rng.Int64N(1e9) + 1, rng.Int64N(9e15) + 1, math.MaxInt64} {
			w := big.NewInt(want)
			e, s, b := k.estimate(w), k.inverse(w), leastBySearch(k, w)
			if e.Cmp(s) != 0 || e.Cmp(b) != 0 {
				t.Errorf("%s→%s receiving %d: closed form %v, stepped %v, bisection %v", key[0], key[1], want, e, s, b)
			}
		}
	}
}

// FuzzQuote checks the properties of checkQuote for any corridor, side and
// amount.
func FuzzQuote(f *testing.F) {
	f.Add(uint8(0), uint8(0), true, int64(10000))
	f.Add(uint8(19), uint8(3), false, int64(100000))
	f.Add(uint8(1), uint8(19), false, int64(9e15))
	f.Add(uint8(5), uint8(17), true, int64(math.MaxInt64))
	f.Add(uint8(17), uint8(5), false, int64(1))
	f.Add(uint8(4), uint8(2), true, int64(-7))
	f.Add(uint8(2), uint8(12), false, int64(123456789))
	src := Default()
	codes := src.Currencies()
	f.Fuzz(func(t *testing.T, from, to uint8, sending bool, amount int64) {
		req := Request{
			Sending:   codes[int(from)%len(codes)].Code,
			Receiving: codes[int(to)%len(codes)].Code,
			Side:      SideReceiving,
			Amount:    amount,
		}
		if sending {
			req.Side = SideSending
		}
		checkQuote(t, src, req)
	})
}

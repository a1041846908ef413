package accountrules

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestRequiredBeneficiaryFieldsSorted: RequiredBeneficiaryFields appends its
// paths in sorted order rather than sorting them (see there); hold it to that,
// without duplicates, for every account type, currency and beneficiary type.
func TestRequiredBeneficiaryFieldsSorted(t *testing.T) {
	currencies := []string{"", "CHF", "BTC"}
	for _, row := range businessMinimums {
		currencies = append(currencies, row.currencies...)
	}
	for _, at := range append(AccountTypes(), "NOPE") {
		for _, c := range currencies {
			for _, bt := range []string{"INDIVIDUAL", "BUSINESS", "PERSON"} {
				got := RequiredBeneficiaryFields(at, c, bt)
				if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
					t.Errorf("RequiredBeneficiaryFields(%s, %q, %s) = %q: not sorted and distinct", at, c, bt, got)
				}
			}
		}
	}
}

// TestSortErrors holds the hand-written merge sort of report.result to
// slices.SortStableFunc: same order by field then message, and equal pairs
// kept in their original order (told apart by their constraints).
func TestSortErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fields := []string{"a", "a.b", "ab", "b", ""}
	messages := []string{"required", "unknown field", "must be a string"}
	for n := 0; n <= 70; n++ {
		for range 20 {
			errs := make([]wire.FieldError, n)
			for i := range errs {
				errs[i] = wire.FieldError{
					Field:      fields[rng.IntN(len(fields))],
					Message:    messages[rng.IntN(len(messages))],
					Constraint: &wire.FieldConstraint{MinLength: intp(i)},
				}
			}
			want := slices.Clone(errs)
			slices.SortStableFunc(want, func(a, b wire.FieldError) int {
				if c := strings.Compare(a.Field, b.Field); c != 0 {
					return c
				}
				return strings.Compare(a.Message, b.Message)
			})
			sortErrors(errs)
			if !slices.Equal(errs, want) {
				t.Fatalf("n=%d: sortErrors gives %v, want %v", n, errs, want)
			}
		}
	}
}

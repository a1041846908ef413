package payments

import (
	"math"
	"testing"
)

// TestExceedsNeverWraps: a limit check adds what was spent to what is
// spent now; near the int64 maximum the sum must not wrap around to a
// negative total that passes (daily+spend > limit was false for
// MaxInt64-1 + MaxInt64/2 against a limit of MaxInt64-1).
func TestExceedsNeverWraps(t *testing.T) {
	const max = math.MaxInt64
	for _, tc := range []struct {
		used, spend, limit int64
		want               bool
		sum                int64
	}{
		{0, 0, 0, false, 0},
		{0, 1, 0, true, 1},
		{40, 60, 100, false, 100},
		{40, 61, 100, true, 101},
		{101, 0, 100, true, 101},
		{max - 1, max / 2, max - 1, true, max},
		{max / 2, max / 2, max, false, max - 1},
		{max, max, max, true, max},
		{0, max, max, false, max},
	} {
		if got := exceeds(tc.used, tc.spend, tc.limit); got != tc.want {
			t.Errorf("exceeds(%d, %d, %d) = %v, want %v", tc.used, tc.spend, tc.limit, got, tc.want)
		}
		if got := addCapped(tc.used, tc.spend); got != tc.sum {
			t.Errorf("addCapped(%d, %d) = %d, want %d", tc.used, tc.spend, got, tc.sum)
		}
	}
}

package hatest

import (
	"testing"
	"time"

	"paywallet/internal/soak"
)

// TestLongestGap: the time without writes is the longest pause between two
// successive writes that overlaps the window around the fault, not one
// before it or after it.
func TestLongestGap(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(s ...float64) []time.Time {
		var out []time.Time
		for _, x := range s {
			out = append(out, t0.Add(time.Duration(x*float64(time.Second))))
		}
		return out
	}
	for _, c := range []struct {
		name     string
		writes   []time.Time
		from, to float64
		want     time.Duration
	}{
		{"none", nil, 0, 10, 0},
		{"one write", at(5), 0, 10, 0},
		{"the gap across the fault", at(1, 2, 3, 12, 13), 4, 20, 9 * time.Second},
		{"a longer gap before the window is left out", at(0, 20, 21, 22, 30), 21, 40, 8 * time.Second},
		{"a gap that starts before the window counts", at(0, 1, 9, 10), 5, 20, 8 * time.Second},
		{"a gap after the window is left out", at(10, 11, 12, 40), 10, 12, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := soak.LongestGap(c.writes, t0.Add(time.Duration(c.from*float64(time.Second))), t0.Add(time.Duration(c.to*float64(time.Second))))
			if got != c.want {
				t.Errorf("LongestGap = %s, want %s", got, c.want)
			}
		})
	}
}

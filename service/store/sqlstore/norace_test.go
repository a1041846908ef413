//go:build !race

package sqlstore_test

// raceEnabled: the race detector is on (see benchEntries).
const raceEnabled = false

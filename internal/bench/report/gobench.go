package report

import (
	"bufio"
	"slices"
	"strconv"
	"strings"
)

// Micro is one Go benchmark, summarised over the runs of `go test -bench
// -count N`: the median of each figure, and the fastest and slowest ns/op.
type Micro struct {
	Package     string  `json:"package"`
	Name        string  `json:"name"` // without the "Benchmark" prefix and the -GOMAXPROCS suffix
	Runs        int     `json:"runs"`
	NsPerOp     float64 `json:"nsPerOp"`
	MinNsPerOp  float64 `json:"minNsPerOp"`
	MaxNsPerOp  float64 `json:"maxNsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
	// Metrics are the median of the other figures a benchmark reports
	// (b.ReportMetric, b.SetBytes' MB/s), by unit.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// ParseGoBench reads the text `go test -bench` prints (several packages,
// several runs each) and returns one Micro per package and benchmark, in
// the order they first appear. Lines that are not benchmark results are
// skipped; a result line without a parsable ns/op is skipped too, so the
// parser never guesses.
func ParseGoBench(out string) []Micro {
	type key struct{ pkg, name string }
	var order []key
	runs := map[key][][3]float64{}            // ns, B, allocs of each run
	metrics := map[key]map[string][]float64{} // the other figures of each run, by unit
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
			continue // not an iteration count: a log line that starts with "Benchmark"
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i >= 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if name == "" {
			continue
		}
		var fig [3]float64
		ns := false
		var other map[string]float64
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			switch f[i+1] {
			case "ns/op":
				fig[0], ns = v, true
			case "B/op":
				fig[1] = v
			case "allocs/op":
				fig[2] = v
			default:
				if other == nil {
					other = map[string]float64{}
				}
				other[f[i+1]] = v
			}
		}
		if !ns {
			continue
		}
		k := key{pkg, name}
		if _, seen := runs[k]; !seen {
			order = append(order, k)
		}
		runs[k] = append(runs[k], fig)
		for unit, v := range other {
			if metrics[k] == nil {
				metrics[k] = map[string][]float64{}
			}
			metrics[k][unit] = append(metrics[k][unit], v)
		}
	}
	out2 := make([]Micro, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		col := func(i int) []float64 {
			v := make([]float64, len(rs))
			for j, r := range rs {
				v[j] = r[i]
			}
			slices.Sort(v)
			return v
		}
		ns := col(0)
		m := Micro{Package: k.pkg, Name: k.name, Runs: len(rs),
			NsPerOp: median(ns), MinNsPerOp: ns[0], MaxNsPerOp: ns[len(ns)-1],
			BytesPerOp: median(col(1)), AllocsPerOp: median(col(2))}
		for unit, vs := range metrics[k] {
			if m.Metrics == nil {
				m.Metrics = map[string]float64{}
			}
			slices.Sort(vs)
			m.Metrics[unit] = median(vs)
		}
		out2 = append(out2, m)
	}
	return out2
}

// median of sorted, non-empty v.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

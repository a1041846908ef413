package browser

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as a plain-text table: one line per operation and
// implementation with its median and the range of the runs, then the
// module's load, the sizes and the versions. The report writer of `make
// bench` may format r its own way; this is for a terminal and for test logs.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Chromium\t%s\n", r.Chromium)
	fmt.Fprintf(tw, "crossOriginIsolated\t%t\n", r.CrossOriginIsolated)
	fmt.Fprintf(tw, "wasm module\tversion %s, %s calls, raw %d B, gzip %d B, brotli %d B\n", r.WasmVersion, r.WasmCalls, r.WasmRaw, r.WasmGzip, r.WasmBrotli)
	fmt.Fprintf(tw, "Turnkey bundle\t%d B; %s\n", r.BundleBytes, packageList(r.Packages))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "op\timpl\tmedian ms\tmin ms\tmax ms\tcalls x runs\tfunction")
	for _, op := range r.Ops {
		s := op.Stat
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.4f\t%d x %d\t%s\n", op.Name, op.Impl, s.MedianMs, s.MinMs, s.MaxMs, s.Iterations, s.Runs, op.Function)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "module ready in its Worker\t%.1f ms median (%.1f-%.1f) over %d loads, module %s\n", r.ModuleReady.MedianMs, r.ModuleReady.MinMs, r.ModuleReady.MaxMs, r.ModuleReady.Runs, r.LoadEncoding)
	fmt.Fprintf(tw, "  Go runtime only, same Worker\t%.1f ms median (%.1f-%.1f), module raw %d B, brotli %d B\n", r.FloorReady.MedianMs, r.FloorReady.MinMs, r.FloorReady.MaxMs, r.FloorRaw, r.FloorBrotli)
	for _, v := range r.Verified {
		fmt.Fprintf(tw, "checked\t%s\n", v)
	}
	return tw.Flush()
}

func packageList(pkgs map[string]string) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		parts = append(parts, name+"@"+pkgs[name])
	}
	return strings.Join(parts, " ")
}

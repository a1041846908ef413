package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"paywallet/internal/bench/browser"
	"paywallet/internal/bench/load"
	"paywallet/internal/bench/report"
)

// TestWrite draws the chart in Chromium and writes the three files: the
// PNG must decode and be as wide as the chart, the report must link it.
func TestWrite(t *testing.T) {
	st := load.Stats{Clients: 8, Requests: 100, RPS: 50, P50Ms: 2, P99Ms: 9}
	r := &report.Report{
		Quick: true, Errors: map[string]string{},
		Browser: &browser.Result{Ops: []browser.Op{
			{Name: "stamp", Impl: "wasm", Stat: browser.Stat{MedianMs: 0.3}},
			{Name: "stamp", Impl: "turnkey-js", Stat: browser.Stat{MedianMs: 0.9}},
		}, WasmBrotli: 960_000},
		Service: []load.ServiceCell{{Store: "sqlite", Op: "execute", Stats: st}},
		BFF:     []load.BFFCell{{Op: "list-external-accounts", Clients: 8, Direct: st, ViaBFF: st, AddedP50Ms: 0.1, AddedP99Ms: 0.3}},
	}
	dir := t.TempDir()
	if err := write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	if msg, failed := r.Errors["chart"]; failed {
		t.Fatalf("chart: %s", msg)
	}
	b, err := os.ReadFile(filepath.Join(dir, "chart.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w < 1000 || img.Bounds().Dy() < 200 {
		t.Fatalf("chart is %v", img.Bounds())
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "![Benchmark chart](chart.png)") {
		t.Fatalf("report.md: %v\n%s", err, md)
	}
	if js, err := os.ReadFile(filepath.Join(dir, "results.json")); err != nil || !bytes.Contains(js, []byte(`"execute"`)) {
		t.Fatalf("results.json: %v\n%s", err, js)
	}
}

func TestFlags(t *testing.T) {
	err := run(context.Background(), []string{"--skip", "browser,nonsense"})
	if err == nil || !strings.Contains(err.Error(), `unknown step "nonsense"`) {
		t.Fatalf("run = %v", err)
	}
}

// TestFrom writes a report again from its results.json.
func TestFrom(t *testing.T) {
	first, again := t.TempDir(), t.TempDir()
	r := &report.Report{Errors: map[string]string{}, Service: []load.ServiceCell{{Store: "postgres", Op: "get-transaction", Stats: load.Stats{Clients: 1, RPS: 10}}}}
	if err := write(context.Background(), first, r); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"--from", filepath.Join(first, "results.json"), "--out", again}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(first, "report.md"))
	b, err := os.ReadFile(filepath.Join(again, "report.md"))
	if err != nil || string(a) != string(b) {
		t.Fatalf("report written again differs (%v):\n%s\n---\n%s", err, a, b)
	}
}

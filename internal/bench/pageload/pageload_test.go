package pageload

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var run = flag.Bool("pageload.run", false, "TestRun: load the real wallet page four times and print the figures")

// TestRun is the whole measurement, for a person at a terminal (it builds
// and starts the wallet, about half a minute):
//
//	go test ./internal/bench/pageload -run TestRun -pageload.run -v
func TestRun(t *testing.T) {
	if !*run {
		t.Skip("run with -pageload.run")
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Log: t.Logf, TraceDir: os.Getenv("PAGELOAD_TRACES")})
	if res != nil {
		for _, l := range res.Loads {
			net, netBytes := l.Count("network")
			cached, _ := l.Count("cache")
			t.Logf("%s (%s): view %s at %.0f ms, FCP %.0f, ready %.0f; %d tasks, %d over 50 ms (%d with the module), longest %.0f ms, blocking %.0f ms; worker's longest %.0f ms; %d requests from the network (%d B), %d from the cache",
				l.Name, l.Visit, l.View, l.ViewMs, l.FCPMs, l.ReadyMs, l.Tasks, len(l.LongTasks), l.ModuleLongTasks(), l.LongestMs, l.BlockingMs, l.WorkerLongestMs, net, netBytes, cached)
			for _, lt := range l.LongTasks {
				t.Logf("    %.0f ms at %.0f ms, module %v (%.1f ms): %s", lt.DurMs, lt.AtMs, lt.Module, lt.ModuleMs, lt.What)
			}
			var paths []string
			for _, r := range l.Resources {
				paths = append(paths, r.URL+" "+r.Source)
			}
			t.Logf("    %s", strings.Join(paths, ", "))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

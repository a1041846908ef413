package pageload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// ev builds a trace event; args is marshalled as the event's args.
func ev(name, ph string, pid, tid int, tsMs, durMs float64, args any) traceEvent {
	b, _ := json.Marshal(args)
	return traceEvent{Name: name, Ph: ph, Pid: pid, Tid: tid, Ts: tsMs * 1000, Dur: durMs * 1000, Args: b}
}

type m = map[string]any

const pageURL = "http://127.0.0.1:8080/"

// sample is a trace of one load: renderer 7 (main thread 7, worker 9)
// navigates to pageURL at 1000 ms; renderer 5 held the previous pageURL.
func sample() []traceEvent {
	return []traceEvent{
		ev("thread_name", "M", 7, 7, 0, 0, m{"name": "CrRendererMain"}),
		ev("thread_name", "M", 7, 9, 0, 0, m{"name": "DedicatedWorker thread"}),
		ev("thread_name", "M", 5, 5, 0, 0, m{"name": "CrRendererMain"}),
		ev("navigationStart", "R", 5, 5, 10, 0, m{"data": m{"documentLoaderURL": "about:blank"}}),
		ev("navigationStart", "R", 7, 7, 1000, 0, m{"data": m{"documentLoaderURL": pageURL}}),
		// Before the navigation: not counted.
		ev("RunTask", "X", 7, 7, 900, 80, nil),
		// The previous pageURL's renderer: not counted.
		ev("RunTask", "X", 5, 5, 1100, 300, nil),
		// A short task.
		ev("RunTask", "X", 7, 7, 1010, 20, nil),
		// A long task of the pageURL: script and layout inside.
		ev("RunTask", "X", 7, 7, 1100, 120, nil),
		ev("FunctionCall", "X", 7, 7, 1100, 70, m{"data": m{"url": "http://127.0.0.1:8080/js/app.3f2a9c0d1e2f3a4b.js"}}),
		ev("Layout", "X", 7, 7, 1120, 30, nil), // inside the script: its time is layout's
		ev("Layout", "X", 7, 7, 1180, 35, nil),
		// A long task the wallet module had a part in: its message handler
		// (wallet.js) sets off the pageURL's drawing.
		ev("RunTask", "X", 7, 7, 1400, 60, nil),
		ev("FunctionCall", "X", 7, 7, 1400, 2, m{"data": m{"url": "http://127.0.0.1:8080/js/wallet.0123456789abcdef.js"}}),
		ev("UpdateLayoutTree", "X", 7, 7, 1405, 40, nil),
		// A long task the module caused: wasm compiled on the main thread.
		ev("RunTask", "X", 7, 7, 1500, 70, nil),
		ev("v8.wasm.compileLazy", "X", 7, 7, 1505, 40, nil),
		// The worker's tasks: the longest is reported.
		ev("RunTask", "X", 7, 9, 1200, 90, nil),
		ev("RunTask", "X", 7, 9, 1300, 30, nil),
		// Requests: the document from the network, a script revalidated
		// (a 200 with no body bytes), the module from the cache, the
		// worker's own script (no send event, answered on the worker), a
		// request of the previous pageURL that failed unanswered.
		ev("ResourceSendRequest", "I", 7, 7, 1001, 0, m{"data": m{"requestId": "a", "url": pageURL}}),
		ev("ResourceReceiveResponse", "I", 7, 7, 1002, 0, m{"data": m{"requestId": "a", "statusCode": 200, "encodedDataLength": 500}}),
		ev("ResourceFinish", "I", 7, 7, 1003, 0, m{"data": m{"requestId": "a", "encodedDataLength": 9500, "decodedBodyLength": 30000}}),
		ev("ResourceSendRequest", "I", 7, 7, 1004, 0, m{"data": m{"requestId": "b", "url": pageURL + "js/app.js"}}),
		ev("ResourceReceiveResponse", "I", 7, 7, 1005, 0, m{"data": m{"requestId": "b", "statusCode": 200, "encodedDataLength": 502}}),
		ev("ResourceFinish", "I", 7, 7, 1006, 0, m{"data": m{"requestId": "b", "encodedDataLength": 502, "decodedBodyLength": 45000}}),
		ev("ResourceSendRequest", "I", 7, 9, 1007, 0, m{"data": m{"requestId": "c", "url": pageURL + "wasm/wallet.9f3611de751f8502.wasm"}}),
		ev("ResourceReceiveResponse", "I", 7, 9, 1008, 0, m{"data": m{"requestId": "c", "statusCode": 200, "fromCache": true}}),
		ev("ResourceFinish", "I", 7, 9, 1009, 0, m{"data": m{"requestId": "c", "decodedBodyLength": 3700000}}),
		ev("ResourceReceiveResponse", "I", 7, 9, 1010, 0, m{"data": m{"requestId": "d", "statusCode": 200, "encodedDataLength": 514}}),
		ev("ResourceFinish", "I", 7, 9, 1011, 0, m{"data": m{"requestId": "d", "encodedDataLength": 514, "decodedBodyLength": 6693}}),
		ev("ResourceFinish", "I", 7, 7, 1012, 0, m{"data": m{"requestId": "e", "didFail": true}}),
		ev("ResourceSendRequest", "I", 7, 7, 1016, 0, m{"data": m{"requestId": "g", "url": pageURL + "js/api.0123456789abcdef.js"}}),
		ev("ResourceReceiveResponse", "I", 7, 7, 1017, 0, m{"data": m{"requestId": "g", "statusCode": 200, "encodedDataLength": 2257}}),
		ev("ResourceFinish", "I", 7, 7, 1018, 0, m{"data": m{"requestId": "g", "encodedDataLength": 0, "decodedBodyLength": 4541}}),
		ev("ResourceSendRequest", "I", 7, 7, 1013, 0, m{"data": m{"requestId": "f", "url": pageURL + "css/app.css"}}),
		ev("ResourceReceiveResponse", "I", 7, 7, 1014, 0, m{"data": m{"requestId": "f", "statusCode": 304, "encodedDataLength": 300}}),
		ev("ResourceFinish", "I", 7, 7, 1015, 0, m{"data": m{"requestId": "f", "encodedDataLength": 300}}),
	}
}

func TestAnalyze(t *testing.T) {
	a, err := analyze(sample(), pageURL)
	if err != nil {
		t.Fatal(err)
	}
	if a.taskCount != 4 || a.longest != 120 || a.workerLong != 90 || a.threads != 2 {
		t.Errorf("tasks %d, longest %v, worker's longest %v, threads %d; want 4, 120, 90, 2", a.taskCount, a.longest, a.workerLong, a.threads)
	}
	want := []Task{
		{AtMs: 100, DurMs: 120, What: "layout 65 ms, script app.3f2a9c0d1e2f3a4b.js 40 ms, not broken down 15 ms"},
		{AtMs: 400, DurMs: 60, Module: true, ModuleMs: 2, What: "style 40 ms, not broken down 18 ms, script wallet.0123456789abcdef.js 2 ms"},
		{AtMs: 500, DurMs: 70, Module: true, ModuleMs: 40, Caused: true, What: "wasm v8.wasm.compileLazy 40 ms, not broken down 30 ms"},
	}
	if !reflect.DeepEqual(a.tasks, want) {
		t.Errorf("long tasks\n%+v\nwant\n%+v", a.tasks, want)
	}
	wantRes := []Resource{
		{URL: "/", Status: 200, Source: "network", Bytes: 9500},
		{URL: "/js/app.js", Status: 200, Source: "revalidated", Bytes: 502},
		{URL: "/wasm/wallet.9f3611de751f8502.wasm", Status: 200, Source: "cache", Bytes: 0},
		{URL: "(worker script)", Status: 200, Source: "network", Bytes: 514},
		{URL: "/js/api.0123456789abcdef.js", Status: 200, Source: "cache", Bytes: 0},
		{URL: "/css/app.css", Status: 304, Source: "revalidated", Bytes: 300},
	}
	if !reflect.DeepEqual(a.resources, wantRes) {
		t.Errorf("requests\n%+v\nwant\n%+v", a.resources, wantRes)
	}

	if _, err := analyze(sample(), "http://127.0.0.1:8080/other"); err == nil || !strings.Contains(err.Error(), "no navigation") {
		t.Errorf("a trace without the pageURL's navigation: %v", err)
	}
}

func TestIsModuleURL(t *testing.T) {
	for u, want := range map[string]bool{
		"http://h/js/wallet.js":                         true,
		"http://h/js/wallet.0123456789abcdef.js":        true,
		"http://h/js/wallet-worker.0123456789abcdef.js": true,
		"/wasm/wasm_exec.js":                            true,
		"http://h/js/direct.js?x=1":                     true,
		"http://h/wasm/wallet.9f3611de751f8502.wasm":    true,
		"http://h/js/app.js":                            false,
		"http://h/js/walletish.js":                      false,
		"http://h/css/wallet.css":                       false,
		"":                                              false,
	} {
		if got := isModuleURL(u); got != want {
			t.Errorf("isModuleURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestLoadCounts(t *testing.T) {
	l := Load{
		LongTasks: []Task{{Module: true, Caused: true}, {}, {Module: true}, {Module: true, Caused: true}},
		Resources: []Resource{{Source: "network", Bytes: 10}, {Source: "cache"}, {Source: "network", Bytes: 5}, {Source: "revalidated", Bytes: 1}},
	}
	if n := l.ModuleLongTasks(); n != 2 {
		t.Errorf("ModuleLongTasks = %d, want 2", n)
	}
	for source, want := range map[string][2]int64{"network": {2, 15}, "cache": {1, 0}, "revalidated": {1, 1}} {
		if n, b := l.Count(source); int64(n) != want[0] || b != want[1] {
			t.Errorf("Count(%q) = %d, %d; want %v", source, n, b, want)
		}
	}
}

package pageload

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// traceEvent is one event of a Chromium trace (the Trace Event Format):
// times in microseconds.
type traceEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// eventArgs is the part of an event's args read here.
type eventArgs struct {
	Name string `json:"name"` // thread_name metadata
	Data struct {
		DocumentLoaderURL string `json:"documentLoaderURL"` // navigationStart
		URL               string `json:"url"`               // scripts
		Type              string `json:"type"`              // EventDispatch
	} `json:"data"`
	BeginData struct {
		URL string `json:"url"`
	} `json:"beginData"` // ParseHTML
	FileName string `json:"fileName"` // v8 compile events
	Mojo     struct {
		Interface string `json:"mojo_interface_tag"`
	} `json:"chrome_mojo_event_info"`
}

func (e *traceEvent) args() eventArgs {
	var a eventArgs
	_ = json.Unmarshal(e.Args, &a) // a field of another shape is left empty
	return a
}

// LongTask is the main-thread threshold of a long task, as Chromium's
// Long Tasks API and Lighthouse's Total Blocking Time count them.
const LongTask = 50.0 // ms

// moduleFiles are the wallet module's files as the page names them
// (content-hashed or not: "wallet.3f2a….js" is wallet.js): the client,
// the worker, the Go runtime's glue, the direct calls' glue, the module.
var moduleFiles = []string{"wallet", "wallet-worker", "wasm_exec", "direct"}

// isModuleURL says whether u is one of the wallet module's files.
func isModuleURL(u string) bool {
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		u = p.Path
	}
	base := path.Base(u)
	if strings.HasSuffix(base, ".wasm") {
		return true
	}
	if !strings.HasSuffix(base, ".js") {
		return false
	}
	stem, _, _ := strings.Cut(base, ".")
	return slices.Contains(moduleFiles, stem)
}

// analysis is what one traced load's events say.
type analysis struct {
	threads    int // renderer threads of the page found (main and worker)
	tasks      []Task
	taskCount  int
	longest    float64 // ms, the longest main-thread task
	workerLong float64 // ms, the longest task of the page's Worker thread
	resources  []Resource
	// partial says the trace missed the navigation's start in the
	// renderer, so the figures begin with its first recorded event.
	partial bool
}

// analyze reads the events of a trace of one load of pageURL: it finds the
// renderer that navigated to pageURL (its last navigationStart there), and
// from that navigation on, the tasks of its main thread (RunTask) with the
// long ones described and attributed, the longest task of its dedicated
// Worker, and the requests the page and its worker made.
func analyze(events []traceEvent, pageURL string) (analysis, error) {
	var a analysis
	pid, start := 0, -1.0
	for i := range events {
		e := &events[i]
		if e.Name == "navigationStart" && e.args().Data.DocumentLoaderURL == pageURL && e.Ts > start {
			pid, start = e.Pid, e.Ts
		}
	}
	if start < 0 {
		// Chromium sometimes commits the navigation in a spare renderer
		// whose first events never reach the trace. The renderer that
		// parsed the page's HTML is the page's; its figures start with
		// the first event the trace has of it.
		for i := range events {
			e := &events[i]
			if e.Name == "ParseHTML" && e.args().BeginData.URL == pageURL {
				pid = e.Pid
				break
			}
		}
		if pid == 0 {
			return a, fmt.Errorf("the trace has no navigation to %s", pageURL)
		}
		for i := range events {
			if e := &events[i]; e.Pid == pid && e.Ph != "M" && e.Ts > 0 && (start < 0 || e.Ts < start) {
				start = e.Ts
			}
		}
		a.partial = true
	}
	mainTid, workerTids := 0, map[int]bool{}
	for i := range events {
		e := &events[i]
		if e.Pid != pid || e.Ph != "M" || e.Name != "thread_name" {
			continue
		}
		switch e.args().Name {
		case "CrRendererMain":
			mainTid = e.Tid
		case "DedicatedWorker thread":
			workerTids[e.Tid] = true
		}
	}
	if mainTid == 0 {
		return a, fmt.Errorf("the trace names no main thread of the renderer of %s", pageURL)
	}
	a.threads = 1 + len(workerTids)

	// Complete events ("X") of the main thread after the navigation, in
	// time order; a task's inner events are those within its span.
	var main []*traceEvent
	for i := range events {
		e := &events[i]
		if e.Pid == pid && e.Ph == "X" && e.Ts >= start {
			switch {
			case e.Tid == mainTid:
				main = append(main, e)
			case workerTids[e.Tid] && e.Name == "RunTask":
				a.workerLong = max(a.workerLong, e.Dur/1000)
			}
		}
	}
	// Time order, and of two events that start together the longer (the
	// parent) first.
	slices.SortStableFunc(main, func(x, y *traceEvent) int {
		switch {
		case x.Ts != y.Ts:
			return cmpFloat(x.Ts, y.Ts)
		default:
			return cmpFloat(y.Dur, x.Dur)
		}
	})
	for i, e := range main {
		if e.Name != "RunTask" {
			continue
		}
		a.taskCount++
		a.longest = max(a.longest, e.Dur/1000)
		if e.Dur/1000 <= LongTask {
			continue
		}
		var inner []*traceEvent
		for _, c := range main[i+1:] {
			if c.Ts > e.Ts+e.Dur {
				break
			}
			if c.Ts+c.Dur <= e.Ts+e.Dur {
				inner = append(inner, c)
			}
		}
		module, moduleMs, what := describe(e, inner)
		a.tasks = append(a.tasks, Task{AtMs: (e.Ts - start) / 1000, DurMs: e.Dur / 1000, Module: module, ModuleMs: moduleMs, What: what,
			Caused: module && e.Dur/1000-moduleMs <= LongTask})
	}
	a.resources = requests(events, pid, start, workerTids)
	return a, nil
}

// unbroken is the label of a task's time no event inside it accounts for:
// mostly JavaScript, which the trace breaks down only with V8's sampler on.
const unbroken = "not broken down"

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// describe says what a long task did, from the events inside it (inner,
// in time order): the three kinds of work it spent the most time in, each
// event's own time (its span less its children's) going to its kind or,
// for an event of no kind, to its parent's. module is whether the wallet
// module had a part in the task, moduleMs that part's time: an event that
// names one of the module's files (a script run, compiled or fetched), any
// wasm work on the main thread, or the page side of a dedicated Worker's
// start (the wallet's worker is the page's only one).
func describe(task *traceEvent, inner []*traceEvent) (module bool, moduleMs float64, what string) {
	ms := map[string]float64{unbroken: task.Dur}
	type open struct {
		end      float64
		label    string
		isModule bool
	}
	stack := []open{{task.Ts + task.Dur, unbroken, false}}
	for _, e := range inner {
		for len(stack) > 1 && e.Ts >= stack[len(stack)-1].end {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		a := e.args()
		u := a.Data.URL
		if u == "" {
			u = a.FileName
		}
		label := kind(e, a, u)
		if label == "" {
			label = parent.label
		}
		ms[parent.label] -= e.Dur
		ms[label] += e.Dur
		isModule := (u != "" && isModuleURL(u)) ||
			strings.Contains(strings.ToLower(e.Name), "wasm") ||
			strings.Contains(a.Mojo.Interface, "DedicatedWorker")
		if isModule {
			module = true
			if !parent.isModule {
				moduleMs += e.Dur / 1000
			}
		}
		stack = append(stack, open{e.Ts + e.Dur, label, isModule || parent.isModule})
	}
	kinds := make([]string, 0, len(ms))
	for k, v := range ms {
		if v > 0 {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(x, y string) int {
		switch {
		case ms[x] > ms[y]:
			return -1
		case ms[x] < ms[y]:
			return 1
		}
		return strings.Compare(x, y)
	})
	var parts []string
	for _, k := range kinds[:min(3, len(kinds))] {
		parts = append(parts, fmt.Sprintf("%s %.0f ms", k, ms[k]/1000))
	}
	return module, moduleMs, strings.Join(parts, ", ")
}

// kind names the work of one event for describe, or "" for an event that
// only wraps others (its time would count twice).
func kind(e *traceEvent, a eventArgs, u string) string {
	file := ""
	if u != "" {
		if p, err := url.Parse(u); err == nil {
			file = " " + path.Base(p.Path)
		}
	}
	switch e.Name {
	case "v8.evaluateModule":
		return "module evaluation"
	case "EvaluateScript", "FunctionCall", "v8.compileModule", "v8.callFunction", "v8.run":
		return "script" + file
	case "BlinkScheduler_PerformMicrotaskCheckpoint", "RunMicrotasks":
		return "promise callbacks"
	case "TimerFire", "FireAnimationFrame", "FireIdleCallback":
		return "callback (" + e.Name + ")"
	case "EventDispatch":
		return "event " + a.Data.Type
	case "Layout":
		return "layout"
	case "UpdateLayoutTree":
		return "style"
	case "Paint", "PrePaint", "Layerize", "Commit":
		return "paint"
	case "ParseHTML":
		return "HTML parsing"
	case "DocumentLoader::CommitNavigation":
		return "navigation commit"
	case "Receive mojo message":
		if a.Mojo.Interface != "" {
			return "IPC " + a.Mojo.Interface
		}
	}
	if strings.Contains(strings.ToLower(e.Name), "wasm") {
		return "wasm " + e.Name
	}
	return ""
}

// requests gathers the page's requests from the trace (its renderer's
// ResourceSendRequest, ResourceReceiveResponse and ResourceFinish events,
// the worker's included) after start, joined by request id: where each
// answer came from and the bytes it took on the wire.
//
// The fromCache flag is not the whole story. An answer with a body and no
// bytes at all on the wire (ResourceFinish's encodedDataLength 0) came from
// a cache too: on a reload Chromium serves the module scripts it holds in
// memory that way. And a revalidation is not always a 304 in the trace:
// after a browser restart Chromium reports the revalidated answer as the
// cached 200, with the headers' bytes only on the wire, so an answer with a
// body none of whose bytes crossed the network (no more than the response
// headers') counts as revalidated too. A dedicated
// worker's own script is the exception: Chromium sends no
// ResourceSendRequest for it and counts its body in no encodedDataLength,
// so it is named "(worker script)" and judged by its flags alone. A
// request that failed without an answer (the previous page's, cancelled
// by the navigation) is left out.
func requests(events []traceEvent, pid int, start float64, workerTids map[int]bool) []Resource {
	type req struct {
		Resource
		sent, answered, failed  bool
		fromCache, workerAnswer bool
		headerBytes, wireBytes  float64
		bodyBytes               float64
	}
	byID := map[string]*req{}
	var order []string
	for i := range events {
		e := &events[i]
		if e.Pid != pid || e.Ts < start {
			continue
		}
		switch e.Name {
		case "ResourceSendRequest", "ResourceReceiveResponse", "ResourceFinish":
		default:
			continue
		}
		var a struct {
			Data struct {
				RequestID         string  `json:"requestId"`
				URL               string  `json:"url"`
				FromCache         bool    `json:"fromCache"`
				StatusCode        int     `json:"statusCode"`
				EncodedDataLength float64 `json:"encodedDataLength"`
				DecodedBodyLength float64 `json:"decodedBodyLength"`
				DidFail           bool    `json:"didFail"`
			} `json:"data"`
		}
		if json.Unmarshal(e.Args, &a) != nil || a.Data.RequestID == "" {
			continue
		}
		d := a.Data
		r, ok := byID[d.RequestID]
		if !ok {
			r = &req{}
			byID[d.RequestID] = r
			order = append(order, d.RequestID)
		}
		switch e.Name {
		case "ResourceSendRequest":
			r.sent, r.URL = true, d.URL
		case "ResourceReceiveResponse":
			r.answered, r.Status, r.fromCache, r.headerBytes = true, d.StatusCode, d.FromCache, d.EncodedDataLength
			r.workerAnswer = workerTids[e.Tid]
		case "ResourceFinish":
			r.failed, r.wireBytes, r.bodyBytes = d.DidFail, d.EncodedDataLength, d.DecodedBodyLength
		}
	}
	out := make([]Resource, 0, len(order))
	for _, id := range order {
		r := byID[id]
		if !r.answered && r.failed {
			continue
		}
		workerScript := !r.sent && r.workerAnswer
		switch {
		case workerScript:
			r.URL = "(worker script)"
		default:
			if p, err := url.Parse(r.URL); err == nil && p.Path != "" {
				r.URL = p.Path
			}
		}
		r.Source, r.Bytes = "network", int64(r.wireBytes)
		switch {
		case r.fromCache, r.wireBytes == 0 && r.bodyBytes > 0:
			r.Source, r.Bytes = "cache", 0 // nothing crossed the network
		case r.Status == 304, !workerScript && r.bodyBytes > 0 && r.wireBytes <= r.headerBytes:
			r.Source = "revalidated"
		}
		out = append(out, r.Resource)
	}
	return out
}

package pageload

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceCategories are what the trace records: the renderer's tasks and
// the events inside them (scripts, style, layout, paint, the requests and
// responses with their cache flags and sizes) as DevTools' Performance
// panel records them, the IPC messages a task handles (toplevel: a
// worker's start shows there), V8's script and wasm events, and the
// thread names. V8's detailed compile category stays off: it records a
// thousand events per load and slows what it measures.
var traceCategories = []string{
	"toplevel",
	"devtools.timeline",
	"disabled-by-default-devtools.timeline",
	"v8",
	"v8.wasm",
	"blink.user_timing",
	"__metadata",
}

// recorder collects the events of one trace of a tab.
type recorder struct {
	mu     sync.Mutex
	events []traceEvent
	done   chan struct{}
	bad    error
}

// startTrace starts recording a trace in the browser of tab; stop ends it
// and returns the events.
func startTrace(tab context.Context) (stop func() ([]traceEvent, error), err error) {
	r := &recorder{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(tab)
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			r.mu.Lock()
			for _, v := range e.Value {
				var te traceEvent
				if err := json.Unmarshal(v, &te); err != nil {
					if r.bad == nil {
						r.bad = err
					}
					continue
				}
				r.events = append(r.events, te)
			}
			r.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(r.done)
		}
	}); err != nil {
		cancel()
		return nil, err
	}
	if _, err := chromedp.Call(tab, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{RecordMode: tracing.TraceConfigRecordModeRecordUntilFull, IncludedCategories: traceCategories},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("start the trace: %w", err)
	}
	return func() ([]traceEvent, error) {
		defer cancel()
		if _, err := chromedp.Call(tab, tracing.End, cdp.Empty{}); err != nil {
			return nil, fmt.Errorf("end the trace: %w", err)
		}
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			return nil, fmt.Errorf("the trace did not complete in 60 s")
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.events, r.bad
	}, nil
}

// writeTrace stores events in the JSON Object Format DevTools and Perfetto
// open.
func writeTrace(path string, events []traceEvent) error {
	b, err := json.Marshal(struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}{events})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

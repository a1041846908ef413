package report

import (
	"fmt"
	"strings"

	"paywallet/internal/bench/pageload"
)

// moduleLongTasks counts the main-thread tasks over 50 ms the wallet
// module caused (pageload.Task.Caused), over every traced load.
func (r *Report) moduleLongTasks() int {
	n := 0
	if r.PageLoad != nil {
		for i := range r.PageLoad.Loads {
			n += r.PageLoad.Loads[i].ModuleLongTasks()
		}
	}
	return n
}

// longTaskMeasured is the budget table's text for the long tasks: the
// module's count, and beside it every long task and the longest, so that a
// page that freezes for its own reasons shows too.
func (r *Report) longTaskMeasured() string {
	p := r.PageLoad
	if p == nil || len(p.Loads) == 0 {
		return ""
	}
	all, part, longest, where := 0, 0, 0.0, ""
	for _, l := range p.Loads {
		all += len(l.LongTasks)
		for _, t := range l.LongTasks {
			if t.Module && !t.Caused {
				part++
			}
		}
		if l.LongestMs > longest {
			longest, where = l.LongestMs, l.Name
		}
	}
	return fmt.Sprintf("%d caused by the module (under 50 ms without its part), %d more it had a small part in, of %d over 50 ms in %d loads; the longest task %s ms (%s)",
		r.moduleLongTasks(), part, all, len(p.Loads), num(longest), where)
}

// pageLoadSection renders the traced loads of the real page: the main
// thread during each, the long tasks with what they did, and the requests,
// the second visit's apart from the others.
func (r *Report) pageLoadSection(b *strings.Builder) {
	p := r.PageLoad
	if p == nil || len(p.Loads) == 0 {
		return
	}
	var rows [][]string
	partial := false
	for _, l := range p.Loads {
		name := l.Name
		if l.Partial {
			name += " ‡"
			partial = true
		}
		rows = append(rows, []string{name, l.Visit, num(l.FCPMs), num(l.ViewMs), num(l.ReadyMs), fmt.Sprint(l.Tasks),
			fmt.Sprintf("%d (%d)", len(l.LongTasks), l.ModuleLongTasks()), num(l.LongestMs), num(l.BlockingMs), num(l.WorkerLongestMs)})
	}
	intro := fmt.Sprintf("The wallet's real page, served by cmd/wallet (sandbox, dev mailbox), in %s on a %s screen with the CPU slowed %g× (Emulation.setCPUThrottlingRate), each load traced (CDP Tracing). "+
		"In order, in one browser profile: the sign-in page signed out on an empty cache; Home signed in on an emptied HTTP cache; Home reloaded; Home after the browser was closed and started again on the same profile. "+
		"Times in ms since the navigation started, on the page's clock: first contentful paint, the view shown (`data-view` set), the wallet module ready (wallet.js's client in place). "+
		"Tasks are the main thread's (RunTask), from the navigation to a second after both; blocking is each task's time over 50 ms, summed (Lighthouse's TBT counts the same from first paint); the worker's longest task is where the module now compiles and starts.",
		orDash(p.Chromium), p.Viewport, p.CPUSlowdown)
	section(b, "Page loads on a phone, the CPU slowed (traced)", intro,
		[]string{"load", "visit", "FCP", "view shown", "module ready", "main-thread tasks", "over 50 ms (caused by the module)", "longest", "blocking", "worker's longest"}, rows)

	if partial {
		b.WriteString("‡ The trace missed the start of this navigation in the page's renderer (Chromium committed it in a spare renderer not yet traced): its tasks and requests count from the first event the trace has of that renderer, and the first ones may be missing.\n\n")
	}
	var long []string
	for _, l := range p.Loads {
		for _, t := range l.LongTasks {
			line := fmt.Sprintf("- %s: %s ms at %s ms: %s", l.Name, num(t.DurMs), num(t.AtMs), t.What)
			switch {
			case t.Caused:
				line += fmt.Sprintf(" — **caused by the wallet module** (%s ms of it its own)", num(t.ModuleMs))
			case t.Module:
				line += fmt.Sprintf(" — the wallet module had a part (%s ms of it its own)", num(t.ModuleMs))
			}
			long = append(long, line)
		}
	}
	if len(long) > 0 {
		b.WriteString("Main-thread tasks over 50 ms, with the kinds of work they spent the most time in (\"not broken down\" is mostly JavaScript, which the trace details only with V8's sampler):\n\n" + strings.Join(long, "\n") + "\n\n")
	}

	// Requests: the first visits and the reload in one table, the second
	// visit in its own, never summed together.
	reqRow := func(l pageload.Load) []string {
		net, netB := l.Count("network")
		rev, revB := l.Count("revalidated")
		cached, _ := l.Count("cache")
		return []string{l.Name, fmt.Sprint(len(l.Resources)), fmt.Sprintf("%d (%s B)", net, grouped(netB)), fmt.Sprintf("%d (%s B)", rev, grouped(revB)), fmt.Sprint(cached), grouped(netB + revB)}
	}
	header := []string{"load", "requests", "from the network (bytes)", "revalidated, 304 (bytes)", "from the HTTP cache", "bytes on the wire"}
	var first, second [][]string
	var fetched []string
	for _, l := range p.Loads {
		if l.Visit == "second" {
			second = append(second, reqRow(l))
			for _, res := range l.Resources {
				if res.Source == "network" {
					fetched = append(fetched, fmt.Sprintf("`%s` %s B", res.URL, grouped(res.Bytes)))
				}
			}
			continue
		}
		first = append(first, reqRow(l))
	}
	const where = "From the same traces (ResourceSendRequest, ResourceReceiveResponse with its fromCache flag, ResourceFinish with encodedDataLength: bytes on the wire, headers included). Revalidated: the answer's body came from the cache after a round trip (a 304)."
	section(b, "Requests: first visits and reload", where, header, first)
	if len(second) > 0 {
		section(b, "Requests: second visit (browser restarted, same profile)", "Reported apart from the first visits. "+where, header, second)
		if len(fetched) > 0 {
			b.WriteString("Fetched again in full on the second visit: " + strings.Join(fetched, ", ") + ".\n\n")
		}
	}
}

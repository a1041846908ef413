package telemetry

import "log/slog"

// EnsureLogHandler is h wrapped with [LogHandler], unless it already is
// one: a part that gets its logger from its caller (the payments service)
// can make sure its request lines carry request_id without adding the
// attribute twice when the process wrapped its logger already.
func EnsureLogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*logHandler); ok {
		return h
	}
	return LogHandler(h)
}

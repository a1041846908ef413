package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"strings"
)

// MaxRequestIDLen bounds a caller's request id: longer ones are replaced,
// so a log line or an error body never carries an unbounded header.
const MaxRequestIDLen = 128

// challengePrefix starts the ids of signed-retry challenges
// ("Request:<uuid>"), which travel in the same Request-Id header. A
// challenge id names a pending signature, not a request: a request that
// carries one gets an id of its own.
const challengePrefix = "Request:"

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewRequestID returns a fresh request id: "req_" and 26 characters of
// base32 over 16 random bytes.
func NewRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "req_" + idEncoding.EncodeToString(b[:])
}

// ValidRequestID reports whether a caller's Request-Id may be taken as the
// id of its request: 1 to MaxRequestIDLen characters of letters, digits
// and "-_.:/+=@", and not a signed-retry challenge id ("Request:…").
// Anything else (spaces, quotes, control characters, anything a log line
// or a JSON body would have to escape) is replaced by a fresh id.
func ValidRequestID(s string) bool {
	if len(s) == 0 || len(s) > MaxRequestIDLen || strings.HasPrefix(s, challengePrefix) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.:/+=@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// RequestIDOf is the id a request carrying header value h gets: h itself
// when valid, else a fresh one.
func RequestIDOf(h string) string {
	if ValidRequestID(h) {
		return h
	}
	return NewRequestID()
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id ctx carries, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// LogHandler wraps h so that every record logged with a context that
// carries a request id (slog's ...Context methods) gets it as the
// attribute "request_id".
func LogHandler(h slog.Handler) slog.Handler { return &logHandler{h} }

type logHandler struct{ slog.Handler }

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestIDFrom(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return l.Handler.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{l.Handler.WithAttrs(attrs)}
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{l.Handler.WithGroup(name)}
}

package bff

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// GET /api/events is the browser's Server-Sent Events stream: the
// webhooks of the cookie's customer, each as
//
//	id: <webhook id>
//	event: <webhook type>
//	data: <the webhook's envelope, one line of JSON>
//
// a comment line every 15 s, and, when the cookie's session ends (logged
// out, revoked, expired: checked at each heartbeat and before each event),
// "event: signed-out" before the stream closes. A browser that reconnects
// with Last-Event-ID gets the events it missed from this instance's recent
// ones; when the instance does not hold that id any more it gets
// "event: resync" and should read the state afresh.
//
// Fasthttp runs the stream writer on a goroutine of its own after the
// handler returned, so the writer never touches the fiber.Ctx; it learns
// that the browser went away when a flush fails (at the latest at the next
// heartbeat). The stream ends by itself at Shutdown (the browser
// reconnects, to another instance) and after streamMaxAge.

const (
	defaultHeartbeat    = 15 * time.Second
	defaultStreamMaxAge = 30 * time.Minute
	// streamRetry is the reconnection delay the browser is told, in ms.
	streamRetry = "3000"
	// streamWriteTimeout bounds one write to the browser; the server's
	// WriteTimeout would otherwise end the stream 30 s after it began.
	streamWriteTimeout = 30 * time.Second
)

// eventsAccepted reports whether the request is an EventSource of the
// wallet's own page: EventSource cannot add X-CSRF, so GET /api/events
// takes "Accept: text/event-stream" together with "Sec-Fetch-Site:
// same-origin" instead. The cookie is SameSite=Strict and the answer holds
// no effect, only data another origin cannot read.
func eventsAccepted(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodGet && c.Path() == "/api/events" &&
		c.Get(headerSecFetchSite) == "same-origin" &&
		strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream")
}

// handleEvents opens the stream for a signed-in cookie.
func (s *Server) handleEvents(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	select {
	case <-s.closing:
		return errUpstream // shutting down: the browser tries again, elsewhere
	default:
	}
	lastID := c.Get("Last-Event-ID")
	if len(lastID) > 100 {
		lastID = ""
	}
	st := &eventStream{s: s, key: storeKey(cs.id), customer: cs.data.CustomerID, conn: c.Context().Conn(),
		ctx: carry(c.UserContext(), context.Background())}
	sub, backlog, found := s.hub.subscribe(st.customer, lastID)
	st.sub = sub
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	// The connection carries this one answer: when the stream ends, it
	// closes (and Shutdown does not wait on it as a keep-alive).
	c.Context().Response.Header.SetConnectionClose()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { st.run(w, backlog, !found) })
	return nil
}

// eventStream is one open GET /api/events, owned by its writer goroutine.
type eventStream struct {
	s        *Server
	key      string // the cookie's store key
	customer string
	conn     net.Conn
	sub      *subscriber
	// ctx carries the request's id and span for the stream's log lines;
	// it never ends (the stream outlives its handler).
	ctx context.Context
}

func (st *eventStream) run(w *bufio.Writer, backlog []Event, resync bool) {
	s := st.s
	s.obs.streams.Inc()
	s.obs.streamsTotal.Inc()
	defer s.obs.streams.Dec()
	defer s.hub.unsubscribe(st.customer, st.sub)
	defer func() {
		if v := recover(); v != nil {
			s.log.ErrorContext(st.ctx, "bff: panic in an event stream", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	// Something at once, so that the browser sees the stream open.
	w.WriteString("retry: " + streamRetry + "\n: events of this wallet\n\n")
	if resync {
		w.WriteString("event: resync\ndata: {}\n\n")
	}
	for _, ev := range backlog {
		writeEvent(w, ev)
	}
	if !st.flush(w) {
		return
	}
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	maxAge := time.NewTimer(s.streamMaxAge)
	defer maxAge.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-maxAge.C:
			return
		case <-st.sub.gone:
			return // fell behind; the browser reconnects with Last-Event-ID
		case ev := <-st.sub.ch:
			switch st.alive() {
			case sessionEnded:
				st.signedOut(w)
				return
			case sessionUnknown:
				return // the reconnection's own check decides
			}
			writeEvent(w, ev)
		case <-heartbeat.C:
			switch st.alive() {
			case sessionEnded:
				st.signedOut(w)
				return
			case sessionUnknown:
				return
			}
			w.WriteString(": heartbeat\n\n")
		}
		if !st.flush(w) {
			return // the browser went away
		}
	}
}

// flush sends what was written, giving the write its own deadline.
func (st *eventStream) flush(w *bufio.Writer) bool {
	if st.conn != nil {
		_ = st.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	}
	return w.Flush() == nil
}

func (st *eventStream) signedOut(w *bufio.Writer) {
	w.WriteString("event: signed-out\ndata: {}\n\n")
	st.flush(w)
}

type sessionState int

const (
	sessionAlive sessionState = iota
	sessionEnded
	sessionUnknown // the store or the service could not be asked
)

// alive checks the cookie's session as signedIn does for every /api
// request: still stored (not logged out), its wallet session not expired
// and still listed by the service (liveness.go). An ended session's entry
// is deleted, as signedIn does.
func (st *eventStream) alive() sessionState {
	s := st.s
	ctx, cancel := context.WithTimeout(s.base, 5*time.Second)
	defer cancel()
	ctx = carry(st.ctx, ctx)
	data, err := s.store.Get(ctx, st.key)
	if errors.Is(err, ErrSessionNotFound) {
		return sessionEnded
	}
	if err != nil {
		s.log.WarnContext(ctx, "bff: event stream: session store", slog.Any("err", err))
		return sessionUnknown
	}
	if !data.SignedIn() || data.CustomerID != st.customer {
		return sessionEnded
	}
	ok := s.now().Before(data.WalletSessionExpiresAt)
	if ok {
		if ok, err = s.live.alive(ctx, data.InternalAccountID, data.WalletSessionID); err != nil {
			s.log.WarnContext(ctx, "bff: event stream: session check", slog.Any("err", err))
			return sessionUnknown
		}
	}
	if !ok {
		if err := s.store.Delete(ctx, st.key); err != nil {
			s.log.WarnContext(ctx, "bff: event stream: ending a session", slog.Any("err", err))
		}
		return sessionEnded
	}
	return sessionAlive
}

// writeEvent writes one event. Its id and type were checked when the
// webhook came in, and its body is compact JSON: none holds a line break.
func writeEvent(w *bufio.Writer, ev Event) {
	w.WriteString("id: ")
	w.WriteString(ev.ID)
	w.WriteString("\nevent: ")
	w.WriteString(ev.Type)
	w.WriteString("\ndata: ")
	w.Write(ev.Body)
	w.WriteString("\n\n")
}

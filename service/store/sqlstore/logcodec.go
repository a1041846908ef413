package sqlstore

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"time"

	"github.com/klauspost/compress/s2"

	"paywallet/service/store"
)

// The event log's events column: the events one transaction recorded,
// framed in binary rather than as JSON, because it is built on the API's
// hot path and a JSON array would escape (and base64) every body. Read by
// CatalogEvents only.
//
//	version byte: logCodecPlain (1) or logCodecDict1 (2)
//	the framing, for each event: uvarint-length-prefixed id, type and
//	  resource id, varint CreatedAt in Unix microseconds,
//	  uvarint-length-prefixed body
//	(version 2: the framing as one S2 block compressed against
//	logdict1.jsonl)
//
// Why compressed: every API transaction that records events appends one
// row, and on SQLite each new 4 kB page of the log is one more page the
// commit writes to the WAL and syncs (a payment's execute wrote ~2.8 kB,
// a new page and its parent on every commit). An S2 block against a
// dictionary of event bodies like ours takes ~2–5 µs for such a row
// (~8 µs with cold caches: it clears a 64 kB table each call) and
// leaves ~17 % of it (without the dictionary ~53 %: one row repeats
// little of itself, but every row repeats the same keys and texts).
// BenchmarkOutboxCost/sqlite: on/off 0.906 → 0.942 (means of five runs).
const (
	logCodecPlain = 1
	logCodecDict1 = 2
)

// logDict1 is version 2's dictionary: one event envelope of each type
// as this service wrote them (ids and times zeroed). It is part of the
// format: rows written with it are read with it, so it never changes;
// a better dictionary is a new version beside this one
// (TestLogDictUnchanged).
//
//go:embed logdict1.jsonl
var logDict1Text []byte

var logDict1 = s2.MakeDict(logDict1Text, []byte(`{"id":"Webhook:`))

// maxLogRow bounds what a compressed row may claim to decompress to (a
// damaged row must not make the catalogue allocate gigabytes): 64 MB,
// far above any transaction's events; a longer framing is written plain.
const maxLogRow = 64 << 20

// logEvent is an event as the log keeps it.
type logEvent struct {
	ID, Type, ResourceID string
	Body                 []byte
	CreatedAt            int64 // Unix microseconds
}

// encodeLog frames events for the events column, compressed (version 2).
func encodeLog(events []store.NewEvent) []byte { return encodeLogUpTo(events, maxLogRow) }

// encodeLogUpTo is encodeLog with the longest framing it compresses.
func encodeLogUpTo(events []store.NewEvent, limit int) []byte {
	n := 0
	for _, e := range events {
		n += 4*binary.MaxVarintLen64 + len(e.ID) + len(e.Type) + len(e.ResourceID) + len(e.Body)
	}
	plain := frameLog(make([]byte, 1, 1+n), events)
	if len(plain)-1 > limit {
		// decodeLog would refuse it compressed: kept plain.
		plain[0] = logCodecPlain
		return plain
	}
	out := make([]byte, 1, 1+s2.MaxEncodedLen(len(plain)-1))
	out[0] = logCodecDict1
	// Encode writes into out's spare capacity, which is large enough:
	// the append then copies the block onto itself.
	block := logDict1.Encode(out[1:cap(out)], plain[1:])
	return append(out[:1], block...)
}

// frameLog appends the framing of events to b.
func frameLog(b []byte, events []store.NewEvent) []byte {
	for _, e := range events {
		b = appendBytes(b, []byte(e.ID))
		b = appendBytes(b, []byte(e.Type))
		b = appendBytes(b, []byte(e.ResourceID))
		b = binary.AppendVarint(b, e.CreatedAt.UnixMicro())
		b = appendBytes(b, e.Body)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

var errLogCodec = errors.New("not an event log row")

// decodeLog reads what encodeLog wrote, either version. The events'
// bodies alias b (the caller's own copy of the column) or the block's
// decompressed bytes, rather than each being copied again.
func decodeLog(b []byte) ([]logEvent, error) {
	if len(b) < 1 {
		return nil, errLogCodec
	}
	switch b[0] {
	case logCodecPlain:
		b = b[1:]
	case logCodecDict1:
		n, err := s2.DecodedLen(b[1:])
		if err != nil || n > maxLogRow {
			return nil, errLogCodec
		}
		if b, err = logDict1.Decode(nil, b[1:]); err != nil {
			return nil, errLogCodec
		}
	default:
		return nil, errLogCodec
	}
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, true
	}
	var out []logEvent
	for len(b) > 0 {
		var e logEvent
		id, ok1 := next()
		typ, ok2 := next()
		res, ok3 := next()
		if !ok1 || !ok2 || !ok3 {
			return nil, errLogCodec
		}
		at, k := binary.Varint(b)
		if k <= 0 {
			return nil, errLogCodec
		}
		b = b[k:]
		body, ok := next()
		if !ok {
			return nil, errLogCodec
		}
		e.ID, e.Type, e.ResourceID, e.CreatedAt = string(id), string(typ), string(res), at
		e.Body = body[:len(body):len(body)]
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errLogCodec
	}
	return out, nil
}

// logTime is a logEvent's time.
func logTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

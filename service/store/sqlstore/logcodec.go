package sqlstore

import (
	"encoding/binary"
	"errors"
	"time"

	"paywallet/service/store"
)

// The event log's events column: the events one transaction recorded,
// framed in binary rather than as JSON, because it is built on the API's
// hot path and a JSON array would escape (and base64) every body. Read by
// CatalogEvents only.
//
//	version byte (1)
//	for each event: uvarint-length-prefixed id, type and resource id,
//	  varint CreatedAt in Unix microseconds, uvarint-length-prefixed body

const logCodecVersion = 1

// logEvent is an event as the log keeps it.
type logEvent struct {
	ID, Type, ResourceID string
	Body                 []byte
	CreatedAt            int64 // Unix microseconds
}

// encodeLog frames events for the events column.
func encodeLog(events []store.NewEvent) []byte {
	n := 1
	for _, e := range events {
		n += 4*binary.MaxVarintLen64 + len(e.ID) + len(e.Type) + len(e.ResourceID) + len(e.Body)
	}
	b := make([]byte, 1, n)
	b[0] = logCodecVersion
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

// decodeLog reads what encodeLog framed. The events' bodies alias b (the
// caller's own copy of the column), rather than each being copied again.
func decodeLog(b []byte) ([]logEvent, error) {
	if len(b) < 1 || b[0] != logCodecVersion {
		return nil, errLogCodec
	}
	b = b[1:]
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

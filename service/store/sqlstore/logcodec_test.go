package sqlstore

import (
	"bytes"
	"testing"
	"time"

	"paywallet/service/store"
)

// FuzzLogCodec: decodeLog gives back exactly what encodeLog framed, and
// refuses (never panics on) anything else.
func FuzzLogCodec(f *testing.F) {
	f.Add("Webhook:1", "OUTGOING_PAYMENT.PENDING", "Transaction:1", []byte(`{"id":"Webhook:1"}`), int64(1_765_000_000_000_000), []byte{1, 2})
	f.Add("", "", "", []byte{}, int64(-1), []byte{})
	f.Add("Webhook:2", "T", "R", bytes.Repeat([]byte("x"), 3000), int64(0), []byte{logCodecVersion, 0x80})
	f.Fuzz(func(t *testing.T, id, typ, res string, body []byte, us int64, junk []byte) {
		at := time.UnixMicro(us)
		events := []store.NewEvent{{ID: id, Type: typ, ResourceID: res, Body: body, CreatedAt: at},
			{ID: res, Type: id, ResourceID: typ, Body: junk, CreatedAt: at.Add(time.Microsecond)}}
		got, err := decodeLog(encodeLog(events))
		if err != nil {
			t.Fatalf("decodeLog(encodeLog(…)): %v", err)
		}
		if len(got) != len(events) {
			t.Fatalf("%d events back, want %d", len(got), len(events))
		}
		for i, e := range events {
			g := got[i]
			if g.ID != e.ID || g.Type != e.Type || g.ResourceID != e.ResourceID || !bytes.Equal(g.Body, e.Body) ||
				g.CreatedAt != e.CreatedAt.UnixMicro() {
				t.Fatalf("event %d back as %+v, want %+v", i, g, e)
			}
		}
		// A body handed out aliases the row but cannot grow into the
		// next event's bytes.
		if len(got[0].Body) != cap(got[0].Body) {
			t.Fatalf("body capacity %d past its length %d", cap(got[0].Body), len(got[0].Body))
		}
		// Arbitrary bytes: an error or events, never a panic.
		_, _ = decodeLog(junk)
		_, _ = decodeLog(append([]byte{logCodecVersion}, junk...))
	})
}

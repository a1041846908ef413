package sqlstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"paywallet/service/store"
)

// FuzzLogCodec: decodeLog gives back exactly what encodeLog framed, and
// refuses (never panics on) anything else.
func FuzzLogCodec(f *testing.F) {
	f.Add("Webhook:1", "OUTGOING_PAYMENT.PENDING", "Transaction:1", []byte(`{"id":"Webhook:1"}`), int64(1_765_000_000_000_000), []byte{1, 2})
	f.Add("", "", "", []byte{}, int64(-1), []byte{})
	f.Add("Webhook:2", "T", "R", bytes.Repeat([]byte("x"), 3000), int64(0), []byte{logCodecDict1, 0x80})
	f.Fuzz(func(t *testing.T, id, typ, res string, body []byte, us int64, junk []byte) {
		at := time.UnixMicro(us)
		events := []store.NewEvent{{ID: id, Type: typ, ResourceID: res, Body: body, CreatedAt: at},
			{ID: res, Type: id, ResourceID: typ, Body: junk, CreatedAt: at.Add(time.Microsecond)}}
		row := encodeLog(events)
		if row[0] != logCodecDict1 {
			t.Fatalf("encodeLog wrote version %d, want %d", row[0], logCodecDict1)
		}
		got, err := decodeLog(row)
		if err != nil {
			t.Fatalf("decodeLog(encodeLog(…)): %v", err)
		}
		// Rows of version 1 (written before compression) still read.
		plain, err := decodeLog(append([]byte{logCodecPlain}, frameLog(nil, events)...))
		if err != nil || len(plain) != len(got) {
			t.Fatalf("version 1 row: %d events, %v", len(plain), err)
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
		_, _ = decodeLog(append([]byte{logCodecPlain}, junk...))
		_, _ = decodeLog(append([]byte{logCodecDict1}, junk...))
	})
}

// TestLogDictUnchanged: logdict1.jsonl is part of version 2's format (a
// row compressed against it reads back only against the same bytes), so
// it never changes once rows may have been written with it; a better
// dictionary is a new codec version with a file of its own.
func TestLogDictUnchanged(t *testing.T) {
	const want = "604fb53a5c1b9f7620462b5297c8252436f86e9309785f6d5c528692d19b1785"
	sum := sha256.Sum256(logDict1Text)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("logdict1.jsonl has SHA-256 %s, want %s: add a new dictionary and codec version instead", got, want)
	}
	if logDict1 == nil {
		t.Fatal("logdict1.jsonl is not a usable dictionary")
	}
}

// TestLogRowCompressed: a payment's execute row (its PROCESSING event and
// the wallet's balance) is written at well under a third of its framed
// size, which is what keeps a commit to one log page (logcodec.go).
func TestLogRowCompressed(t *testing.T) {
	at := time.Date(2026, 12, 6, 18, 18, 0, 590290000, time.UTC)
	lines := strings.Split(strings.TrimSpace(string(logDict1Text)), "\n")
	var events []store.NewEvent
	for _, l := range lines {
		switch {
		case strings.Contains(l, `"type":"OUTGOING_PAYMENT.PROCESSING"`), strings.Contains(l, `"type":"INTERNAL_ACCOUNT.BALANCE_UPDATED"`):
			// New ids and times, as a real row has.
			body := strings.ReplaceAll(l, "019b0000-0000-7000-8000-000000000000", "01a24c93-be0e-7067-ba72-6401293c1b2e")
			body = strings.ReplaceAll(body, "2026-01-01T00:00:00.000000Z", "2026-12-06T18:18:00.59029Z")
			events = append(events, store.NewEvent{ID: "Webhook:01a24c93-be0e-7067-ba72-6401293c1b2e", Type: "T",
				ResourceID: "Transaction:01a24c93-be0c-74ff-a793-f1763f6e80dd", Body: []byte(body), CreatedAt: at})
		}
	}
	if len(events) != 2 {
		t.Fatalf("%d sample events in logdict1.jsonl, want 2", len(events))
	}
	plain := len(frameLog(nil, events))
	row := encodeLog(events)
	if len(row)*3 > plain {
		t.Errorf("row of %d bytes for %d framed: want under a third", len(row), plain)
	}
	if _, err := decodeLog(row); err != nil {
		t.Fatal(err)
	}
}

// TestLogRowTooLarge: a damaged row claiming a huge size is refused
// before anything is allocated for it.
func TestLogRowTooLarge(t *testing.T) {
	row := binary.AppendUvarint([]byte{logCodecDict1}, maxLogRow+1)
	row = append(row, bytes.Repeat([]byte{0}, 64)...)
	if _, err := decodeLog(row); err == nil {
		t.Fatal("decodeLog read a row claiming more than maxLogRow bytes")
	}
}

// TestLogRowTooLongToCompress: a framing longer than decodeLog takes
// compressed is written plain, so it still reads back.
func TestLogRowTooLongToCompress(t *testing.T) {
	events := []store.NewEvent{{ID: "Webhook:1", Type: "T", ResourceID: "R", Body: bytes.Repeat([]byte("x"), 200),
		CreatedAt: time.Unix(1, 0)}}
	row := encodeLogUpTo(events, 100)
	if row[0] != logCodecPlain {
		t.Fatalf("version %d, want %d", row[0], logCodecPlain)
	}
	got, err := decodeLog(row)
	if err != nil || len(got) != 1 || !bytes.Equal(got[0].Body, events[0].Body) {
		t.Fatalf("decodeLog = %v, %v", got, err)
	}
	if row := encodeLogUpTo(events, 1000); row[0] != logCodecDict1 {
		t.Fatalf("version %d under the limit, want %d", row[0], logCodecDict1)
	}
}

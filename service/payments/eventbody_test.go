package payments

import (
	"bytes"
	"testing"

	"paywallet/service/store"
)

// TestEventBody: the body sent for a stored event (recorded without its
// sequence) is byte for byte what encoding the whole envelope gives, and
// an event recorded with the sequence in its body (before the store
// assigned it) is sent as it is.
func TestEventBody(t *testing.T) {
	data := map[string]any{"id": "Transaction:1", "sequence": 9, "note": `"quoted" <b>`}
	full := func(seq int64) []byte {
		b, err := encodeEnvelope(webhookEnvelope{ID: "Webhook:1", Type: "OUTGOING_PAYMENT.PENDING", Timestamp: "2026-11-24T22:00:00Z", Data: data, Sequence: seq})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	stored := full(0)
	cases := []struct {
		name string
		body []byte
		seq  int64
		want []byte
	}{
		{"first", stored, 1, full(1)},
		{"large", stored, 1234567, full(1234567)},
		{"recorded with it already", full(7), 7, full(7)},
		{"no sequence", stored, 0, stored},
		{"empty object", []byte(`{}`), 3, []byte(`{"sequence":3}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eventBody(&store.Event{Body: tc.body, Sequence: tc.seq})
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("eventBody = %s\nwant        %s", got, tc.want)
			}
		})
	}
}

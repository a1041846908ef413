package wire

import (
	"encoding/json"
	"testing"
)

// TestPendingLimitJSON: a pending amount is absent, null or a number, and
// reads back as it was written.
func TestPendingLimitJSON(t *testing.T) {
	hours := 0
	cases := []struct {
		in   PendingWalletLimits
		want string
	}{
		{PendingWalletLimits{EffectiveAt: "t"}, `{"effectiveAt":"t"}`},
		{PendingWalletLimits{PerPayment: PendingLimit{Set: true}, EffectiveAt: "t"}, `{"perPayment":null,"effectiveAt":"t"}`},
		{PendingWalletLimits{Daily: PendingLimit{Set: true, Amount: new(int64(9_000_000_000_000_000))}, NewRecipientCoolingOffHours: &hours, EffectiveAt: "t"},
			`{"daily":9000000000000000,"newRecipientCoolingOffHours":0,"effectiveAt":"t"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.in)
		if err != nil || string(b) != c.want {
			t.Fatalf("%+v: %s %v, want %s", c.in, b, err, c.want)
		}
		var back PendingWalletLimits
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if string(again) != c.want {
			t.Fatalf("read back %s, want %s", again, c.want)
		}
	}
	var bad PendingWalletLimits
	if err := json.Unmarshal([]byte(`{"perPayment":"5"}`), &bad); err == nil {
		t.Fatal("a string amount was read")
	}
}

package webhooksig_test

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"time"

	"paywallet/shared/webhooksig"
)

// A rotation: the service signs with the old and the new generation at
// once; a receiver that knows only the old keys accepts the delivery, and so
// does one that knows only the new ones.
func ExampleKeys() {
	old, _ := webhooksig.GenerateGeneration()
	next, _ := webhooksig.GenerateGeneration()
	keys, _ := webhooksig.NewKeys([]*webhooksig.Generation{old, next}, nil) // oldest first

	// Sealed at rest by the service, restored at start-up.
	sealed, _ := next.MarshalPrivate()
	restored, _ := webhooksig.ParseGeneration(sealed)
	fmt.Println(restored.KeyID() == next.KeyID())

	id := "Webhook:0199a3c4-0000-7000-8000-000000000001"
	body := []byte(`{"id":"` + id + `","type":"TEST","timestamp":"2026-11-22T12:00:00Z"}`)
	now := time.Now()
	h, _ := keys.Sign(id, body, now)
	req, _ := http.NewRequest(http.MethodPost, "https://receiver.example/hooks", nil)
	h.Set(req.Header)

	knowsOld := webhooksig.JWKS{Keys: old.JWKs()}
	knowsNew := webhooksig.JWKS{Keys: next.JWKs()}
	for _, known := range []webhooksig.JWKS{knowsOld, knowsNew} {
		got, err := webhooksig.Verify(req.Header.Get(webhooksig.Header), body, known, now)
		errStd := webhooksig.VerifyStandard(req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"),
			req.Header.Get("webhook-signature"), body, known.Ed25519Keys(), now)
		fmt.Println(got, err, errStd)
	}
	// Output:
	// true
	// Webhook:0199a3c4-0000-7000-8000-000000000001 <nil> <nil>
	// Webhook:0199a3c4-0000-7000-8000-000000000001 <nil> <nil>
}

// A Standard Webhooks receiver configured with the service's whpk_ key.
func ExampleVerifyStandard() {
	gen, _ := webhooksig.GenerateGeneration()
	keys, _ := webhooksig.NewKeys([]*webhooksig.Generation{gen}, nil)
	whpk := keys.PublicKeys()[0] // shown to the receiver's operator

	body := []byte(`{"id":"Webhook:0199a3c4-0000-7000-8000-000000000001","type":"TEST","timestamp":"2026-11-22T12:00:00Z"}`)
	now := time.Now()
	h, _ := keys.Sign("Webhook:0199a3c4-0000-7000-8000-000000000001", body, now)

	pub, err := webhooksig.ParseStandardPublicKey(whpk)
	if err != nil {
		panic(err)
	}
	err = webhooksig.VerifyStandard(h.StdID, h.StdTimestamp, h.StdSignature, body, []ed25519.PublicKey{pub}, now)
	fmt.Println(err)
	// Output: <nil>
}

package webhooksig_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"time"

	"paywallet/shared/webhooksig"
)

// A receiver checks a delivery with the service's published keys.
func ExampleVerify() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := webhooksig.NewSigner(key)
	jwks, _ := webhooksig.JWKS{Keys: []webhooksig.JWK{signer.JWK()}}.Marshal() // GET /2025-10-13/webhooks/jwks.json

	body := []byte(`{"id":"Webhook:0199a3c4-0000-7000-8000-000000000001","type":"TEST","timestamp":"2026-11-22T12:00:00Z"}`)
	now := time.Now()
	headers, _ := signer.Sign("Webhook:0199a3c4-0000-7000-8000-000000000001", body, now)

	// The receiver's side: the raw body and the Service-Webhook-Signature header.
	keys, err := webhooksig.ParseJWKS(jwks)
	if err != nil {
		panic(err)
	}
	id, err := webhooksig.Verify(headers.Signature, body, keys, now)
	fmt.Println(id, err)
	// Output: Webhook:0199a3c4-0000-7000-8000-000000000001 <nil>
}

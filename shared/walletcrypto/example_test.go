//go:build !js

package walletcrypto_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log"

	"paywallet/shared/walletcrypto"
)

func ExampleGenerateKey() {
	k, err := walletcrypto.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	defer k.Wipe()
	pub := k.PublicKey()
	fmt.Println(len(pub.CompressedHex()), len(pub.UncompressedHex()))
	fmt.Println(walletcrypto.IsUncompressedHex(pub.UncompressedHex()))
	// Output:
	// 66 130
	// true
}

func ExampleNewPrivateKey() {
	// The API key fixture of Turnkey's api-key-stamper.
	scalar, _ := hex.DecodeString("487f361ddfd73440e707f4daa6775b376859e8a3c9f29b3bb694a12927c0213c")
	k, err := walletcrypto.NewPrivateKey(scalar)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.PublicKey().CompressedHex())
	// Output: 02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316
}

func ExampleSignStamp() {
	k, err := walletcrypto.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	payload := []byte(`{"quoteId":"Quote:019542f5-b3e7-1d02-0000-000000000006"}`)

	// Client (wasm): stamp the exact payloadToSign bytes.
	header, err := walletcrypto.SignStamp(k, payload)
	if err != nil {
		log.Fatal(err)
	}

	// Service: parse the Service-Wallet-Signature header, check the key, verify.
	st, err := walletcrypto.ParseStamp(header)
	if err != nil {
		log.Fatal(err)
	}
	if !st.PublicKey.Equal(k.PublicKey()) {
		log.Fatal("not the session key")
	}
	if err := st.Verify(payload); err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified")
	// Output: verified
}

func ExampleSealBundle() {
	recipient, err := walletcrypto.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	bundle, err := walletcrypto.SealBundle(recipient.PublicKey(), []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	plaintext, err := walletcrypto.OpenBundle(recipient, bundle)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", plaintext)
	// Output: hello
}

func ExampleOpenBundle() {
	recipient, err := walletcrypto.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	bundle, _ := walletcrypto.SealBundle(recipient.PublicKey(), []byte("hello"))

	other, _ := walletcrypto.GenerateKey()
	_, err = walletcrypto.OpenBundle(other, bundle)
	fmt.Println(errors.Is(err, walletcrypto.ErrDecrypt))
	fmt.Println(err)
	// Output:
	// true
	// walletcrypto: decryption failed: authentication failed
}

func ExampleOpenCredentialBundle() {
	// The credential bundle vector of Turnkey's SDK tests.
	scalar, _ := hex.DecodeString("20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56")
	k, err := walletcrypto.NewPrivateKey(scalar)
	if err != nil {
		log.Fatal(err)
	}
	pt, err := walletcrypto.OpenCredentialBundle(k, "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%x\n", pt)
	// Output: 67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9
}

func ExampleVerifyTargetBundle() {
	// Service: a signer key (pinned in the client) and a per-OTP target key.
	signer, _ := walletcrypto.GenerateKey()
	target, _ := walletcrypto.GenerateKey()
	bundle, err := walletcrypto.NewTargetBundle(signer, target.PublicKey())
	if err != nil {
		log.Fatal(err)
	}

	// Client: verify against the pinned key, then seal the OTP to the target.
	client, _ := walletcrypto.GenerateKey()
	to, err := walletcrypto.VerifyTargetBundle(bundle, signer.PublicKey())
	if err != nil {
		log.Fatal(err)
	}
	sealed, err := walletcrypto.SealOTP(to, "123456", client.PublicKey())
	if err != nil {
		log.Fatal(err)
	}

	// Service: open and read the OTP.
	pt, err := walletcrypto.OpenBundle(target, sealed)
	if err != nil {
		log.Fatal(err)
	}
	code, pub, err := walletcrypto.ParseOTPPlaintext(pt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(code, pub.Equal(client.PublicKey()))

	// A bundle from another signer is refused.
	impostor, _ := walletcrypto.GenerateKey()
	forged, _ := walletcrypto.NewTargetBundle(impostor, target.PublicKey())
	_, err = walletcrypto.VerifyTargetBundle(forged, signer.PublicKey())
	fmt.Println(err)
	// Output:
	// 123456 true
	// walletcrypto: signer does not match the pinned key
}

func ExampleSealSessionKey() {
	client, _ := walletcrypto.GenerateKey() // its clientPublicKey was uncompressed
	session, _ := walletcrypto.GenerateKey()

	// Service: encryptedSessionSigningKey.
	sealed, err := walletcrypto.SealSessionKey(client.PublicKey(), session)
	if err != nil {
		log.Fatal(err)
	}

	// Client (wasm): recover the session key and stamp with it.
	got, err := walletcrypto.OpenSessionKey(client, sealed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.PublicKey().Equal(session.PublicKey()))
	// Output: true
}

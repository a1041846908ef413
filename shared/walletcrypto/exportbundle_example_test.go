//go:build !js

package walletcrypto_test

import (
	"errors"
	"fmt"
	"log"

	"paywallet/shared/walletcrypto"
)

func ExampleOpenExportBundle() {
	// Client (wasm): a one-time key for this export; its public half goes in
	// the request as clientPublicKey.
	client, err := walletcrypto.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	defer client.Wipe()

	// Service: seal the account's mnemonic to it and sign with the key the
	// client pins.
	signer, _ := walletcrypto.GenerateKey()
	bundle, err := walletcrypto.NewExportBundle(signer, client.PublicKey(), "Customer:019542f5-b3e7-7d02-8000-000000000001",
		[]byte("legal winner thank year wave sausage worth useful legal winner thank yellow"))
	if err != nil {
		log.Fatal(err)
	}

	// Client: check the signer and the signature, then open.
	org, mnemonic, err := walletcrypto.OpenExportBundle(bundle, signer.PublicKey(), client)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(org)
	fmt.Printf("%s\n", mnemonic)

	// A bundle from any other signer is refused before decryption.
	impostor, _ := walletcrypto.GenerateKey()
	forged, _ := walletcrypto.NewExportBundle(impostor, client.PublicKey(), "Customer:x", []byte("abandon"))
	_, _, err = walletcrypto.OpenExportBundle(forged, signer.PublicKey(), client)
	fmt.Println(errors.Is(err, walletcrypto.ErrSignerMismatch))
	// Output:
	// Customer:019542f5-b3e7-7d02-8000-000000000001
	// legal winner thank year wave sausage worth useful legal winner thank yellow
	// true
}

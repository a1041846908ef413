package bip39_test

import (
	"fmt"
	"log"
	"strings"

	"paywallet/service/bip39"
)

func ExampleFromEntropy() {
	// The first official test vector: 128 zero bits.
	m, err := bip39.FromEntropy(make([]byte, 16))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m)
	fmt.Println(bip39.Valid(m), bip39.Valid(strings.Replace(m, "about", "above", 1)))
	// Output:
	// abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about
	// true false
}

func ExampleNewMnemonic() {
	m, err := bip39.NewMnemonic()
	if err != nil {
		log.Fatal(err)
	}
	entropy, err := bip39.Entropy(m)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(strings.Fields(m)), len(entropy))
	// Output: 24 32
}

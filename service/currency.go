package service

import "paywallet/shared/wire"

// currencies describes the currencies the service holds balances in.
// decimals is the number of smallest units per unit as a power of ten.
var currencies = map[string]wire.Currency{
	"USD": {Code: "USD", Name: "United States Dollar", Symbol: "$", Decimals: 2},
	"EUR": {Code: "EUR", Name: "Euro", Symbol: "€", Decimals: 2},
	"GBP": {Code: "GBP", Name: "Pound Sterling", Symbol: "£", Decimals: 2},
	"MXN": {Code: "MXN", Name: "Mexican Peso", Symbol: "$", Decimals: 2},
	"BTC": {Code: "BTC", Name: "Bitcoin", Symbol: "₿", Decimals: 8},
}

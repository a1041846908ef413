package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"paywallet/internal/serviceconfig"
	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// runDeposit is `paymentsd deposit`: it records an incoming bank credit
// that quoted an internal account's deposit reference, with the same
// configuration (database, at-rest key, mode, …) as the server, and prints
// the COMPLETED INCOMING transaction as JSON on out. Its webhook events go
// to the event log, which a running server delivers. A refusal is an error
// naming the code and every bad field.
func runDeposit(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("paymentsd deposit", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: paymentsd deposit -reference REF -amount N -currency CUR [flags]

Records money that arrived on the operator's receiving bank account quoting
a deposit reference, and prints the transaction as JSON:
  - an internal account's (the reference of its fundingPaymentInstructions):
    the account is credited and a COMPLETED INCOMING transaction recorded;
  - a REALTIME_FUNDING quote's (its paymentInstructions): the amount must be
    exactly the quote's totalSendingAmount before it expires, and the quote
    executes (its payment goes PROCESSING and is paid out by the server).
Use the same configuration (database, at-rest key, mode) as the server; a
running server delivers the webhook events. -bank-reference, the bank's own
reference of the credit, is required: one credit is recorded once.

Flags (the service flags can also be set with the environment variable in brackets):
`)
		fs.PrintDefaults()
	}
	var req payments.DepositRequest
	var amount int64
	var amountSet bool
	fs.StringVar(&req.Reference, "reference", "", "the deposit reference the payment quoted (required)")
	fs.Func("amount", "the amount that arrived, in the smallest unit of the currency, e.g. 12550 for USD 125.50 (required)", func(v string) error {
		_, err := fmt.Sscan(v, &amount)
		if err != nil || fmt.Sprint(amount) != strings.TrimPrefix(v, "+") {
			return errors.New("must be an integer (the smallest unit of the currency)")
		}
		amountSet = true
		return nil
	})
	fs.StringVar(&req.Currency, "currency", "", "the currency that arrived, e.g. USD; it must be the account's (required)")
	fs.StringVar(&req.SenderName, "sender-name", "", "who sent the money, as the bank reports it (optional)")
	fs.StringVar(&req.BankReference, "bank-reference", "", "the bank's own reference of the credit (required; one credit is recorded once, so running the command again is harmless)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	var opts serviceconfig.Options
	opts.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("deposit: unexpected arguments %q", fs.Args())
	}
	if amountSet {
		req.Amount = &amount
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: lvl}))
	opts.NoMail = true
	built, err := opts.Build(ctx, log, "", false)
	if err != nil {
		return err
	}
	defer built.Close()
	x, err := built.Service.RecordDeposit(ctx, req)
	if err != nil {
		return depositRefusal(err)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(x)
}

// depositRefusal says why a deposit was refused: the code, the message and
// every bad field.
func depositRefusal(err error) error {
	var pe *payments.Error
	if !errors.As(err, &pe) {
		return fmt.Errorf("deposit: %w", err)
	}
	msg := "deposit refused: " + pe.Code + ": " + pe.Message
	if fields, ok := pe.Details["errors"].([]wire.FieldError); ok {
		for _, f := range fields {
			msg += "\n  " + f.Field + ": " + f.Message
		}
	}
	return errors.New(msg)
}

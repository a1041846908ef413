package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"paywallet/service/payments"
)

// runTrigger is `paymentsd trigger TYPE`: it asks a sandbox service for a
// realistic event of the type (POST /sandbox/events/trigger) and prints
// the answer: the resource the event is about and when it arrives.
func runTrigger(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("paymentsd trigger", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: paymentsd trigger TYPE [--service URL] [--credential ID:SECRET]

Makes a service in sandbox mode emit a realistic event of TYPE through its
own operations (POST /sandbox/events/trigger): a funding, a payment, a
customer… It prints the resource the event is about and when the event
arrives: now, or after settlement for a payment's outcome. Run
"paymentsd listen" beside it to see the event reach your receiver.

Types:
`)
		for _, t := range payments.EventTypes {
			fmt.Fprintln(fs.Output(), "  "+t)
		}
		fmt.Fprint(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	var cf clientFlags
	cf.register(fs)
	positional, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		fs.Usage()
		return fmt.Errorf("trigger: want one event type, got %d arguments", len(positional))
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var got payments.TriggeredEvent
	if err := c.call(ctx, "POST", "/sandbox/events/trigger", payments.TriggerEventRequest{Type: positional[0]}, &got); err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	_, err = fmt.Fprintf(out, "%s for %s: %s\n", got.Type, got.ResourceID, got.Message)
	return err
}

package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
)

// BenchmarkQuoteJSON measures what every quote answer (create, get,
// execute) spends turning the stored quote into its wire form and encoding
// it: the currency look-ups, the status, the decoded rate details and
// counterparty, and encoding/json.
func BenchmarkQuoteJSON(b *testing.B) {
	svc := newTestService(b)
	now := svc.now()
	q := &store.Quote{
		ID:                   "Quote:019aa5d2-7c10-7000-8000-000000000001",
		TransactionID:        "Transaction:019aa5d2-7c10-7000-8000-000000000002",
		CustomerID:           "Customer:019aa5d2-7c10-7000-8000-000000000003",
		SourceAccountID:      "InternalAccount:019aa5d2-7c10-7000-8000-000000000004",
		DestinationAccountID: "ExternalAccount:019aa5d2-7c10-7000-8000-000000000005",
		PaymentRail:          "SPEI",
		LockedSide:           "SENDING",
		LockedAmount:         10000,
		SendingCurrency:      "USD",
		ReceivingCurrency:    "MXN",
		TotalSendingAmount:   10000,
		TotalReceivingAmount: 181250,
		FeesIncluded:         1250,
		ExchangeRate:         18.25,
		RateDetails:          []byte(`{"counterpartyMultiplier":18.25,"counterpartyFixedFee":1000,"serviceApiMultiplier":1,"serviceApiFixedFee":250,"serviceApiVariableFeeRate":0,"serviceApiVariableFeeAmount":0}`),
		Payload:              `{"type":"ACTIVITY_TYPE_SIGN_TRANSACTION_V2","timestampMs":"1795262400000","organizationId":"InternalAccount:019aa5d2-7c10-7000-8000-000000000004","parameters":{"unsignedTransaction":{"quoteId":"Quote:019aa5d2-7c10-7000-8000-000000000001","transactionId":"Transaction:019aa5d2-7c10-7000-8000-000000000002","destinationAccountId":"ExternalAccount:019aa5d2-7c10-7000-8000-000000000005","sendingCurrency":"USD","receivingCurrency":"MXN","totalSendingAmount":10000,"totalReceivingAmount":181250,"expiresAt":"2026-11-22T12:03:00Z"}}}`,
		Description:          "Rent for November",
		CreatedAt:            now,
		ExpiresAt:            now.Add(3 * time.Minute),
	}
	x := &store.Transaction{ID: q.TransactionID, QuoteID: q.ID, Type: "OUTGOING", Status: "PENDING",
		NextStepAt: q.ExpiresAt, Counterparty: []byte(`{"FULL_NAME":"Ana María López"}`)}
	// The rate details as createQuote writes them, which rateDetailsFast
	// reads (stale keys would measure json.Unmarshal's fallback instead).
	if _, ok := rateDetailsFast(q.RateDetails); !ok {
		b.Fatalf("rate details %s are not what createQuote writes", q.RateDetails)
	}
	out, err := json.Marshal(svc.quoteJSON(q, x))
	if err != nil || !strings.Contains(string(out), `"payloadToSign"`) || !strings.Contains(string(out), `"status":"PENDING"`) {
		b.Fatalf("quote JSON %s, %v", out, err)
	}
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if _, err := json.Marshal(svc.quoteJSON(q, x)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliverWebhooks measures what the worker spends per delivered
// event (DESIGN: the service's CPU per delivered webhook): cataloguing the
// log, leasing the endpoint and reading its work, signing each delivery
// three ways, the HTTP POST to a loopback receiver that answers 204 (its
// share is in the figure), and recording the round. The events are
// recorded before the timer starts, 50 to a transaction, each with a
// resource of its own and a body of about 1.5 kB, as a transaction's.
func BenchmarkDeliverWebhooks(b *testing.B) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	svc := newTestService(b, func(c *Config) { c.WebhookURL = rcv.URL })
	ctx := context.Background()
	data := map[string]string{"id": "", "note": strings.Repeat("x", 1400)}
	for done := 0; done < b.N; {
		err := svc.store.Tx(ctx, func(tx store.Tx) error {
			for i := 0; i < 50 && done+i < b.N; i++ {
				data["id"] = fmt.Sprintf("Transaction:%d", done+i)
				if err := svc.emit(ctx, tx, webhooksig.OutgoingPaymentCompleted, data["id"], data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += 50
	}
	b.ResetTimer()
	delivered := 0
	for delivered < b.N {
		n, err := svc.DeliverWebhooks(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatalf("%d of %d delivered, then none", delivered, b.N)
		}
		delivered += n
	}
}

package payments

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"paywallet/service/store"
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
		RateDetails:          []byte(`{"counterpartyMultiplier":18.25,"counterpartyFixedFee":1000,"gridApiMultiplier":1,"gridApiFixedFee":250,"gridApiVariableFeeRate":0,"gridApiVariableFeeAmount":0}`),
		Payload:              `{"type":"ACTIVITY_TYPE_SIGN_TRANSACTION_V2","timestampMs":"1795262400000","organizationId":"InternalAccount:019aa5d2-7c10-7000-8000-000000000004","parameters":{"unsignedTransaction":{"quoteId":"Quote:019aa5d2-7c10-7000-8000-000000000001","transactionId":"Transaction:019aa5d2-7c10-7000-8000-000000000002","destinationAccountId":"ExternalAccount:019aa5d2-7c10-7000-8000-000000000005","sendingCurrency":"USD","receivingCurrency":"MXN","totalSendingAmount":10000,"totalReceivingAmount":181250,"expiresAt":"2026-11-22T12:03:00Z"}}}`,
		Description:          "Rent for November",
		CreatedAt:            now,
		ExpiresAt:            now.Add(3 * time.Minute),
	}
	x := &store.Transaction{ID: q.TransactionID, QuoteID: q.ID, Type: "OUTGOING", Status: "PENDING",
		NextStepAt: q.ExpiresAt, Counterparty: []byte(`{"FULL_NAME":"Ana María López"}`)}
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

package service

import (
	"net/http"
)

// routes is the route table: every operation of the interface on one line,
// with the credential and permission it needs, its success status, its
// Idempotency-Key scope and the domain operation it runs (see route.go for
// how a line is read). Grouped by area.
func (s *Service) routes() []route {
	o := s.ops
	return []route{
		// Customers and their internal accounts (payments/customers.go,
		// wallets.go).
		post("/customers", manage, o.CreateCustomer, created),
		get("/customers", view, o.ListCustomers),
		get("/customers/internal-accounts", view, o.ListInternalAccounts),
		get("/customers/{customerId}", view, o.GetCustomer),
		patch("/customers/{customerId}", manage, o.UpdateCustomer),
		del("/customers/{customerId}", manage, o.DeleteCustomer),
		patch("/internal-accounts/{id}", manage, o.UpdateInternalAccount),
		post("/internal-accounts/{id}/export", manage, o.ExportWallet),

		// A wallet's personal limits (limits.go): a change is a signed
		// retry; a stricter limit applies at once, a laxer one after 24 h.
		get("/internal-accounts/{id}/limits", view, o.GetWalletLimits),
		patch("/internal-accounts/{id}/limits", manage, o.UpdateWalletLimits),

		// A wallet's credentials and sessions (credentialops.go,
		// sessions.go).
		get("/auth/credentials", view, o.ListCredentials),
		post("/auth/credentials", manage, o.CreateCredential, created),
		del("/auth/credentials/{id}", manage, o.DeleteCredential, noContent),
		post("/auth/credentials/{id}/challenge", manage, o.ChallengeCredential, optionalBody),
		post("/auth/credentials/{id}/verify", manage, o.VerifyCredential, retryHeadersByOp),
		get("/auth/sessions", view, o.ListSessions),
		del("/auth/sessions/{id}", manage, o.RevokeSession, noContent),
		post("/auth/sessions/{id}/refresh", manage, o.RefreshSession, created),

		// The customers' security logs and the security e-mails' link
		// (security.go, securityops.go; our extensions).
		// The log is /customers/security-events?customerId=, like the
		// reference's /customers/internal-accounts?customerId=: a path
		// /customers/{customerId}/security-events would overlap
		// /customers/external-accounts/{externalAccountId} in the mux.
		get("/customers/security-events", view, o.ListSecurityEvents),
		post("/auth/sign-out-everywhere", manage, o.SignOutEverywhere),

		// External accounts, the customers' and the platform's
		// (externalaccounts.go, receiver.go).
		get("/discoveries", view, o.Discoveries),
		post("/customers/external-accounts", manage, o.CreateCustomerExternalAccount, created),
		get("/customers/external-accounts", view, o.ListExternalAccounts),
		get("/customers/external-accounts/{externalAccountId}", view, o.GetCustomerExternalAccount),
		del("/customers/external-accounts/{externalAccountId}", manage, o.DeactivateCustomerExternalAccount, noContent, ignoresBody),
		post("/platform/external-accounts", manage, o.CreatePlatformExternalAccount, created),
		get("/platform/external-accounts", view, o.ListPlatformExternalAccounts),
		get("/platform/external-accounts/{externalAccountId}", view, o.GetPlatformExternalAccount),
		del("/platform/external-accounts/{externalAccountId}", manage, o.DeactivatePlatformExternalAccount, noContent, ignoresBody),
		get("/platform/internal-accounts", view, o.ListPlatformInternalAccounts),
		get("/receiver/external-account/{accountId}", view, o.LookupExternalAccount),

		// Agents, as the platform manages them (agents.go, agentops.go).
		post("/agents", manage, o.CreateAgent, created),
		get("/agents", view, o.ListAgents),
		del("/agents/{agentId}", manage, o.DeleteAgent, noContent, ignoresBody),
		patch("/agents/{agentId}/policy", manage, o.UpdateAgentPolicy),
		get("/agents/approvals", view, o.AgentApprovals),
		post("/agents/{agentId}/actions/{actionId}/approve", transact, o.ApproveAgentAction, idem("agents.actions.approve")),
		post("/agents/{agentId}/actions/{actionId}/reject", transact, o.RejectAgentAction, optionalBody),
		get("/agents/{agentId}", view, o.GetAgent),
		patch("/agents/{agentId}", manage, o.UpdateAgent),
		post("/agents/{agentId}/device-codes", manage, o.CreateDeviceCode, created, ignoresBody),
		get("/agents/device-codes/{code}/status", view, o.DeviceCodeStatus),
		public("POST", "/agents/device-codes/{code}/redeem", o.RedeemDeviceCode, ignoresBody),

		// What an agent does with its bearer token (agents.go).
		agent("GET", "/agents/me", o.GetAgentMe),
		agent("GET", "/agents/me/internal-accounts", o.AgentInternalAccounts),
		agent("GET", "/agents/me/external-accounts", o.AgentExternalAccounts),
		agent("POST", "/agents/me/external-accounts", o.AgentCreateExternalAccount, created),
		agent("GET", "/agents/me/external-accounts/{externalAccountId}", o.AgentExternalAccount),
		agent("DELETE", "/agents/me/external-accounts/{externalAccountId}", o.AgentDeleteExternalAccount, noContent, ignoresBody),
		agent("GET", "/agents/me/transactions", o.AgentTransactions),
		agent("GET", "/agents/me/transactions/{transactionId}", o.AgentTransaction),
		agent("POST", "/agents/me/quotes", o.AgentCreateQuote, created, idem("agents.quotes.create")),
		agent("GET", "/agents/me/quotes/{quoteId}", o.AgentGetQuote),
		agent("POST", "/agents/me/quotes/{quoteId}/execute", o.AgentExecuteQuote, idem("agents.quotes.execute")),
		agent("GET", "/agents/me/actions", o.AgentActions),
		agent("GET", "/agents/me/actions/{actionId}", o.AgentGetAction),
		agent("POST", "/agents/me/transfer-in", o.AgentTransferIn, created, idem("agents.transfers.in")),
		agent("POST", "/agents/me/transfer-out", o.AgentTransferOut, created, idem("agents.transfers.out")),

		// Quotes and payments (quotes.go, realtime.go, transactions.go,
		// incoming.go, cancel.go).
		post("/quotes", transact, o.CreateQuote, created, idem("quotes.create")),
		get("/quotes/{quoteId}", view, o.GetQuote),
		post("/quotes/{quoteId}/execute", transact, o.ExecuteQuote, idem("quotes.execute")),
		// Step-up: a held payment or signed action confirmed by the
		// person (stepup.go).
		post("/quotes/{quoteId}/authorize", transact, o.AuthorizeQuote),
		post("/quotes/{quoteId}/authorize/resend", transact, o.ResendQuoteCode, noContent, ignoresBody),
		get("/sca/challenges/{challengeId}", view, o.GetChallenge),
		post("/sca/challenges/{challengeId}/authorize", manage, o.AuthorizeChallenge),
		post("/sca/challenges/{challengeId}/resend", manage, o.ResendChallengeCode, noContent, ignoresBody),
		post("/sandbox/internal-accounts/{accountId}/fund", transact, o.FundSandbox, sandboxOnly, idem("sandbox.fund")),
		post("/sandbox/send", transact, o.SandboxSend, sandboxOnly, idem("sandbox.send")),
		get("/exchange-rates", view, o.ExchangeRates),
		get("/transactions", view, o.ListTransactions),
		get("/transactions/{transactionId}", view, o.GetTransaction),
		post("/transactions/{transactionId}/confirm", transact, o.ConfirmReceipt, optionalBody),
		post("/transactions/{transactionId}/cancel", transact, o.CancelTransaction, optionalBody),
		post("/sandbox/uma/receive", transact, o.SandboxUmaReceive, sandboxOnly, idem("sandbox.uma.receive")),
		post("/transactions/{transactionId}/approve", transact, o.ApprovePayment, optionalBody),
		post("/transactions/{transactionId}/reject", transact, o.RejectPayment, optionalBody),
		get("/receiver/uma/{receiverUmaAddress}", view, o.LookupUma),

		// Same-currency transfers (transfers.go); a transfer-out from an
		// embedded wallet is signed, its first call's challenge never
		// recorded under the key.
		post("/transfer-in", transact, o.TransferIn, created, idem("transfers.in")),
		post("/transfer-out", transact, o.TransferOut, created, idem("transfers.out")),

		// The books (ledgerops.go): a wallet's statement, the platform's
		// accounts, one ledger transaction and the signed chain head.
		get("/internal-accounts/{id}/entries", view, o.ListLedgerEntries),
		get("/ledger/accounts", view, o.LedgerAccounts),
		get("/ledger/transactions/{id}", view, o.GetLedgerTransaction),
		get("/ledger/head", view, o.LedgerHead),

		// The platform's configuration and webhooks (webhooks.go,
		// webhookworker.go).
		get("/config", view, o.GetConfig),
		patch("/config", manage, o.UpdateConfig),
		post("/sandbox/webhooks/test", manage, o.TestWebhook, sandboxOnly),
		// A realistic event of a type, made by the service's own
		// operations (sandboxevents.go); 202: some arrive after settlement.
		post("/sandbox/events/trigger", manage, o.TriggerSandboxEvent, sandboxOnly, accepted),
		public("GET", "/webhooks/jwks.json", handlerFunc(s.webhookJWKS)),
		get("/webhooks/keys", view, o.ListWebhookKeys),
		post("/webhooks/keys/rotate", manage, o.RotateWebhookKeys),
		get("/webhooks/deliveries", view, o.ListWebhookDeliveries),
		post("/webhooks/deliveries/{eventId}/replay", manage, o.ReplayWebhookDelivery, optionalBody),
		// Several endpoints and the events (webhookendpoints.go,
		// events.go).
		post("/webhooks/endpoints", manage, o.CreateWebhookEndpoint, created),
		get("/webhooks/endpoints", view, o.ListWebhookEndpoints),
		get("/webhooks/endpoints/{endpointId}", view, o.GetWebhookEndpoint),
		patch("/webhooks/endpoints/{endpointId}", manage, o.UpdateWebhookEndpoint),
		del("/webhooks/endpoints/{endpointId}", manage, o.DeleteWebhookEndpoint, noContent),
		post("/webhooks/endpoints/{endpointId}/replay", manage, o.ReplayWebhookEvents),
		get("/events", view, o.ListEvents),
		get("/events/{eventId}", view, o.GetEvent),

		// API tokens and what the service tells of itself (apitokens.go,
		// directory.go). The token's answer holds its secret: like every
		// JSON answer it is Cache-Control: no-store.
		post("/tokens", manage, o.CreateAPIToken, created),
		get("/tokens", view, o.ListAPITokens),
		get("/tokens/{tokenId}", view, o.GetAPIToken),
		del("/tokens/{tokenId}", manage, o.DeleteAPIToken, noContent),
		get("/customers/end-user-terms", view, o.CurrentEndUserTerms),
		get("/uma-providers", view, o.UmaProviders),
		get("/vasps", view, o.Vasps),

		// The OpenAPI document of this interface (openapi.go).
		public("GET", "/openapi.json", s.serveDocument(false)),
		public("GET", "/openapi.yaml", s.serveDocument(true)),
	}
}

// webhookJWKS answers the webhooks' public keys, without credentials,
// cacheable for five minutes.
func (s *Service) webhookJWKS(w http.ResponseWriter, r *http.Request) error {
	b, err := s.ops.WebhookKeys().Marshal()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(append(b, '\n'))
	return nil
}

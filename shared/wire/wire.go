// Package wire holds the JSON shapes of the payments service interface
// (version 2025-10-13) that more than one side of the project reads or writes:
// the service produces them, the BFF reads a few of them, tests decode them.
//
// Field order follows the spec's tables. Optional fields use omitempty so that
// a shape never carries a field the spec marks as absent (for example a
// Session in a list never has encryptedSessionSigningKey).
package wire

// Version is the date-valued path segment every service path starts with.
const Version = "2025-10-13"

// BasePath is the prefix of every service path.
const BasePath = "/" + Version

// Error is the flat error body of every non-2xx answer.
type Error struct {
	Status  int            `json:"status"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// FieldError names one bad field of a refused request, in dot notation.
type FieldError struct {
	Field      string           `json:"field"`
	Constraint *FieldConstraint `json:"constraint,omitempty"`
	Message    string           `json:"message"`
}

// FieldConstraint describes the rule a FieldError broke.
type FieldConstraint struct {
	Format    string   `json:"format,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Enum      []string `json:"enum,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
}

// List is the envelope of paginated lists.
type List[T any] struct {
	Data       []T    `json:"data"`
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
	TotalCount *int   `json:"totalCount,omitempty"`
}

// Data is the envelope of the short, unpaginated lists (credentials,
// sessions, discoveries).
type Data[T any] struct {
	Data []T `json:"data"`
}

// Currency describes a currency and how its smallest unit relates to it.
type Currency struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Decimals int    `json:"decimals"`
}

// CurrencyAmount is an amount in the smallest unit of its currency.
type CurrencyAmount struct {
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
}

// Customer is the customer resource (grid-api-facts §3.5).
type Customer struct {
	ID                 string `json:"id"`
	PlatformCustomerID string `json:"platformCustomerId"`
	CustomerType       string `json:"customerType"`
	UmaAddress         string `json:"umaAddress"`
	Email              string `json:"email,omitempty"`
	FullName           string `json:"fullName,omitempty"`
	KYCStatus          string `json:"kycStatus,omitempty"`
	CreatedAt          string `json:"createdAt"`
	UpdatedAt          string `json:"updatedAt"`
	// The reference's other customer fields (see customers.go): common,
	// then those of INDIVIDUAL customers, then those of BUSINESS ones.
	CustomerCommon
	KYBStatus string `json:"kybStatus,omitempty"`
	IndividualFields
	BusinessInfo *BusinessInfo `json:"businessInfo,omitempty"`
	IsDeleted    bool          `json:"isDeleted"`
}

// CustomerCreateRequest is the body of POST /customers.
type CustomerCreateRequest struct {
	PlatformCustomerID string `json:"platformCustomerId"`
	CustomerType       string `json:"customerType"`
	Email              string `json:"email,omitempty"`
	FullName           string `json:"fullName,omitempty"`
	UmaAddress         string `json:"umaAddress,omitempty"`
	// The reference's other fields (see customers.go). Identifier is
	// write-only: no answer carries it.
	CustomerCommon
	IndividualFields
	Identifier   string        `json:"identifier,omitempty"`
	BusinessInfo *BusinessInfo `json:"businessInfo,omitempty"`
	KYCStatus    string        `json:"kycStatus,omitempty"`
	KYBStatus    string        `json:"kybStatus,omitempty"`
}

// PaymentInstructions tells how to pay into or out of an account.
type PaymentInstructions struct {
	InstructionsNotes   string         `json:"instructionsNotes,omitempty"`
	AccountOrWalletInfo map[string]any `json:"accountOrWalletInfo"`
}

// InternalAccount is the internal-account resource (grid-api-facts §3.4).
type InternalAccount struct {
	ID                         string                `json:"id"`
	CustomerID                 string                `json:"customerId,omitempty"`
	Type                       string                `json:"type"`
	Status                     string                `json:"status"`
	Balance                    CurrencyAmount        `json:"balance"`
	TotalBalance               CurrencyAmount        `json:"totalBalance"`
	FundingPaymentInstructions []PaymentInstructions `json:"fundingPaymentInstructions"`
	PrivateEnabled             *bool                 `json:"privateEnabled,omitempty"`
	CreatedAt                  string                `json:"createdAt"`
	UpdatedAt                  string                `json:"updatedAt"`
}

// AuthMethod is an authentication credential. Its shape is strict: the
// spec allows no fields beyond these.
type AuthMethod struct {
	ID                        string `json:"id"`
	AccountID                 string `json:"accountId"`
	Type                      string `json:"type"`
	Nickname                  string `json:"nickname"`
	CreatedAt                 string `json:"createdAt"`
	UpdatedAt                 string `json:"updatedAt"`
	CredentialID              string `json:"credentialId,omitempty"`
	OTPEncryptionTargetBundle string `json:"otpEncryptionTargetBundle,omitempty"`
}

// Session is a wallet session (AuthSession).
type Session struct {
	ID                         string `json:"id"`
	AccountID                  string `json:"accountId"`
	Type                       string `json:"type"`
	Nickname                   string `json:"nickname"`
	CreatedAt                  string `json:"createdAt"`
	UpdatedAt                  string `json:"updatedAt"`
	ExpiresAt                  string `json:"expiresAt"`
	CredentialID               string `json:"credentialId,omitempty"`
	EncryptedSessionSigningKey string `json:"encryptedSessionSigningKey,omitempty"`
}

// SignedRequestChallenge is the 202 body of a signed-retry operation.
type SignedRequestChallenge struct {
	Type          string `json:"type,omitempty"`
	PayloadToSign string `json:"payloadToSign"`
	RequestID     string `json:"requestId"`
	ExpiresAt     string `json:"expiresAt"`
	// ScaChallenge (extension) is set when the operator's policy holds
	// the action until the person confirms it: authorize it (POST
	// /sca/challenges/{id}/authorize) before the signed retry.
	ScaChallenge *ScaChallenge `json:"scaChallenge,omitempty"`
}

// ChallengeRequest is the optional body of POST /auth/credentials/{id}/challenge.
type ChallengeRequest struct {
	ClientPublicKey string `json:"clientPublicKey,omitempty"`
}

// VerifyRequest is the body of POST /auth/credentials/{id}/verify. Only the
// fields of the credential's type may be present: encryptedOtpBundle for
// EMAIL_OTP, oidcToken and clientPublicKey for OAUTH, assertion for PASSKEY.
type VerifyRequest struct {
	Type               string            `json:"type"`
	EncryptedOTPBundle string            `json:"encryptedOtpBundle,omitempty"`
	OIDCToken          string            `json:"oidcToken,omitempty"`
	ClientPublicKey    string            `json:"clientPublicKey,omitempty"`
	Assertion          *PasskeyAssertion `json:"assertion,omitempty"`
}

// PasskeyAssertion is a WebAuthn assertion, every member base64url
// (grid-api-facts §3.3).
type PasskeyAssertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJson"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// PasskeyAttestation is a WebAuthn registration response, every member but
// transports base64url.
type PasskeyAttestation struct {
	CredentialID      string   `json:"credentialId"`
	ClientDataJSON    string   `json:"clientDataJson"`
	AttestationObject string   `json:"attestationObject"`
	Transports        []string `json:"transports,omitempty"`
}

// CredentialCreateRequest is the body of POST /auth/credentials.
type CredentialCreateRequest struct {
	Type        string              `json:"type"`
	AccountID   string              `json:"accountId"`
	OIDCToken   string              `json:"oidcToken,omitempty"`
	Nickname    string              `json:"nickname,omitempty"`
	Challenge   string              `json:"challenge,omitempty"`
	Attestation *PasskeyAttestation `json:"attestation,omitempty"`
}

// PasskeyAuthChallenge answers the challenge of a PASSKEY credential: the
// AuthMethod plus what the WebAuthn assertion and the verify call need.
// Challenge is the lower-case hex SHA-256 of the canonical session-creation
// body; the client passes its UTF-8 bytes (not the decoded digest) as the
// WebAuthn challenge.
type PasskeyAuthChallenge struct {
	AuthMethod
	Challenge string `json:"challenge"`
	RequestID string `json:"requestId"`
	ExpiresAt string `json:"expiresAt"`
}

// InternalAccountUpdateRequest is the body of PATCH /internal-accounts/{id}.
type InternalAccountUpdateRequest struct {
	PrivateEnabled *bool `json:"privateEnabled,omitempty"`
}

// ExportRequest is the body of POST /internal-accounts/{id}/export.
type ExportRequest struct {
	ClientPublicKey string `json:"clientPublicKey"`
}

// ExportResponse answers a completed export.
type ExportResponse struct {
	ID                         string `json:"id"`
	EncryptedWalletCredentials string `json:"encryptedWalletCredentials"`
}

// CustomerUpdateRequest is the body of PATCH /customers/{id}; absent fields
// stay as they are.
type CustomerUpdateRequest struct {
	CustomerType string  `json:"customerType"`
	Email        *string `json:"email,omitempty"`
	FullName     *string `json:"fullName,omitempty"`
	UmaAddress   *string `json:"umaAddress,omitempty"`
	// The reference's other fields (see customers.go), each changed only
	// when present (an empty string or a missing member leaves it as it
	// is); region is set on creation only. Address replaces the address,
	// BusinessInfo changes the business fields it names.
	Currencies          []string                    `json:"currencies,omitempty"`
	PhoneNumber         *string                     `json:"phoneNumber,omitempty"`
	EndUserTermsConsent *EndUserTermsConsentRequest `json:"endUserTermsConsent,omitempty"`
	Address             *Address                    `json:"address,omitempty"`
	IndividualFields
	Identifier   string        `json:"identifier,omitempty"`
	BusinessInfo *BusinessInfo `json:"businessInfo,omitempty"`
	KYCStatus    string        `json:"kycStatus,omitempty"`
	KYBStatus    string        `json:"kybStatus,omitempty"`
}

// Header names of the signed retry.
const (
	HeaderWalletSignature = "Service-Wallet-Signature"
	HeaderRequestID       = "Request-Id"
	HeaderIdempotencyKey  = "Idempotency-Key"
)

// SandboxSignature is the literal that sandbox mode accepts in place of a
// stamp. Production mode never accepts it.
const SandboxSignature = "sandbox-valid-signature"

// Credential and session types.
const (
	TypeEmailOTP = "EMAIL_OTP"
	TypePasskey  = "PASSKEY"
	TypeOAuth    = "OAUTH"
)

// ExternalAccount is a destination outside the service. AccountInfo is the
// variant object of its accountType; in responses it also carries
// paymentRails.
type ExternalAccount struct {
	ID                            string         `json:"id"`
	CustomerID                    string         `json:"customerId,omitempty"`
	Status                        string         `json:"status"`
	Currency                      string         `json:"currency"`
	PlatformAccountID             string         `json:"platformAccountId,omitempty"`
	OwnershipType                 string         `json:"ownershipType,omitempty"`
	AccountInfo                   map[string]any `json:"accountInfo"`
	DefaultUmaDepositAccount      bool           `json:"defaultUmaDepositAccount"`
	BeneficiaryVerificationStatus string         `json:"beneficiaryVerificationStatus,omitempty"`
	BeneficiaryVerifiedData       map[string]any `json:"beneficiaryVerifiedData,omitempty"`
	CreatedAt                     string         `json:"createdAt"`
	UpdatedAt                     string         `json:"updatedAt,omitempty"`
}

// WebAuthnUserHandle is the WebAuthn user handle (user.id) of a wallet
// account: the 16 bytes of the UUID in its InternalAccount:<uuid> id. The
// BFF puts it in passkey creation options and the service checks it in
// assertions, so both derive it here. ok is false for any other id.
func WebAuthnUserHandle(accountID string) (handle []byte, ok bool) {
	const prefix = "InternalAccount:"
	if len(accountID) != len(prefix)+36 || accountID[:len(prefix)] != prefix {
		return nil, false
	}
	u := accountID[len(prefix):]
	out := make([]byte, 0, 16)
	for i := 0; i < len(u); {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if u[i] != '-' {
				return nil, false
			}
			i++
			continue
		}
		hi, ok1 := hexVal(u[i])
		lo, ok2 := hexVal(u[i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return out, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// QuoteRequest is the body of POST /quotes (grid-api-facts §3.6) with an
// ACCOUNT source and an ACCOUNT destination.
type QuoteRequest struct {
	Source               QuoteSource      `json:"source"`
	Destination          QuoteDestination `json:"destination"`
	LockedCurrencySide   string           `json:"lockedCurrencySide"`
	LockedCurrencyAmount int64            `json:"lockedCurrencyAmount"`
	Description          string           `json:"description,omitempty"`
}

// QuoteSource is where a quote's money comes from.
type QuoteSource struct {
	SourceType string `json:"sourceType"`
	AccountID  string `json:"accountId,omitempty"` // empty for REALTIME_FUNDING
	CustomerID string `json:"customerId,omitempty"`
	Currency   string `json:"currency,omitempty"`
}

// QuoteDestination is where a quote's money goes.
type QuoteDestination struct {
	DestinationType string `json:"destinationType"`
	AccountID       string `json:"accountId"`
	// UmaAddress is the reference's UMA_ADDRESS destination, read only
	// to refuse it by name (this service pays external accounts).
	UmaAddress  string `json:"umaAddress,omitempty"`
	PaymentRail string `json:"paymentRail,omitempty"`
	Currency    string `json:"currency,omitempty"`
}

// RateDetails breaks a quote's rate into its parts (spec "RateDetails").
// The counterparty fields are present on quotes only.
type RateDetails struct {
	CounterpartyMultiplier      *float64 `json:"counterpartyMultiplier,omitempty"`
	CounterpartyFixedFee        *int64   `json:"counterpartyFixedFee,omitempty"`
	ServiceAPIMultiplier        float64  `json:"serviceApiMultiplier"`
	ServiceAPIFixedFee          int64    `json:"serviceApiFixedFee"`
	ServiceAPIVariableFeeRate   float64  `json:"serviceApiVariableFeeRate"`
	ServiceAPIVariableFeeAmount int64    `json:"serviceApiVariableFeeAmount"`
}

// Quote is a locked rate and fees for one payment (spec "Quote").
type Quote struct {
	ID                      string                `json:"id"`
	Status                  string                `json:"status"`
	CreatedAt               string                `json:"createdAt"`
	ExpiresAt               string                `json:"expiresAt"`
	Source                  QuoteSource           `json:"source"`
	Destination             QuoteDestination      `json:"destination"`
	SendingCurrency         Currency              `json:"sendingCurrency"`
	ReceivingCurrency       Currency              `json:"receivingCurrency"`
	TotalSendingAmount      int64                 `json:"totalSendingAmount"`
	TotalReceivingAmount    int64                 `json:"totalReceivingAmount"`
	ExchangeRate            float64               `json:"exchangeRate"`
	FeesIncluded            int64                 `json:"feesIncluded"`
	TransactionID           string                `json:"transactionId"`
	PaymentInstructions     []PaymentInstructions `json:"paymentInstructions,omitempty"`
	CounterpartyInformation map[string]string     `json:"counterpartyInformation,omitempty"`
	RateDetails             *RateDetails          `json:"rateDetails,omitempty"`
	Description             string                `json:"description,omitempty"`
	// ScaChallenge is set while the quote is PENDING_AUTHORIZATION.
	ScaChallenge *ScaChallenge `json:"scaChallenge,omitempty"`
}

// TransactionEndpoint is the source or destination of a transaction.
type TransactionEndpoint struct {
	SourceType      string `json:"sourceType,omitempty"`
	DestinationType string `json:"destinationType,omitempty"`
	AccountID       string `json:"accountId,omitempty"` // empty for a REALTIME_FUNDING source
	Currency        string `json:"currency"`
	UmaAddress      string `json:"umaAddress,omitempty"` // a source of type UMA_ADDRESS
}

// ReconciliationInstructions let a platform match a transaction with its
// own books.
type ReconciliationInstructions struct {
	Reference       string `json:"reference"`
	TransactionHash string `json:"transactionHash,omitempty"`
}

// Transaction is one payment (spec "Transaction").
type Transaction struct {
	ID                         string                      `json:"id"`
	Status                     string                      `json:"status"`
	Type                       string                      `json:"type"`
	Direction                  string                      `json:"direction"` // CREDIT (INCOMING) or DEBIT (OUTGOING)
	Destination                TransactionEndpoint         `json:"destination"`
	Source                     *TransactionEndpoint        `json:"source,omitempty"`
	CustomerID                 string                      `json:"customerId"`
	PlatformCustomerID         string                      `json:"platformCustomerId"`
	SentAmount                 *CurrencyAmount             `json:"sentAmount,omitempty"`
	ReceivedAmount             CurrencyAmount              `json:"receivedAmount"`
	ExchangeRate               float64                     `json:"exchangeRate,omitempty"`
	QuoteID                    string                      `json:"quoteId,omitempty"`
	PaymentRail                string                      `json:"paymentRail,omitempty"`
	SettledAt                  string                      `json:"settledAt,omitempty"`
	CreatedAt                  string                      `json:"createdAt,omitempty"`
	UpdatedAt                  string                      `json:"updatedAt,omitempty"`
	ReceiptDeliveryConfirmedAt string                      `json:"receiptDeliveryConfirmedAt,omitempty"`
	Description                string                      `json:"description,omitempty"`
	CounterpartyInformation    map[string]string           `json:"counterpartyInformation,omitempty"`
	Fees                       *int64                      `json:"fees,omitempty"`
	ReconciliationInstructions *ReconciliationInstructions `json:"reconciliationInstructions,omitempty"`
	RateDetails                *RateDetails                `json:"rateDetails,omitempty"`
	FailureReason              string                      `json:"failureReason,omitempty"`
}

// ConfirmReceiptRequest is the optional body of POST
// /transactions/{id}/confirm.
type ConfirmReceiptRequest struct {
	ReceiptDeliveryConfirmedAt string `json:"receiptDeliveryConfirmedAt,omitempty"`
}

// SandboxFundRequest is the body of POST /sandbox/internal-accounts/{id}/fund.
type SandboxFundRequest struct {
	Amount int64 `json:"amount"`
}

// ExchangeRate is one row of GET /exchange-rates (grid-api-facts §3.9).
type ExchangeRate struct {
	SourceCurrency         Currency         `json:"sourceCurrency"`
	DestinationCurrency    Currency         `json:"destinationCurrency"`
	DestinationPaymentRail string           `json:"destinationPaymentRail,omitempty"`
	MinSendingAmount       int64            `json:"minSendingAmount"`
	MaxSendingAmount       int64            `json:"maxSendingAmount"`
	SendingAmount          int64            `json:"sendingAmount"`
	ReceivingAmount        int64            `json:"receivingAmount"`
	ExchangeRate           float64          `json:"exchangeRate"`
	Fees                   ExchangeRateFees `json:"fees"`
	UpdatedAt              string           `json:"updatedAt"`
}

// ExchangeRateFees are the fees of an ExchangeRate row, in the smallest
// unit of the sending currency.
type ExchangeRateFees struct {
	Fixed int64 `json:"fixed"`
	Total int64 `json:"total"`
}

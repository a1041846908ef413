package wire

// Step-up (strong customer authentication) in the reference API's shapes,
// with this service's extensions marked. A held action carries an
// ScaChallenge; the proof is an ScaAuthorization.

// ScaChallenge is the reference's ScaChallenge: what the person must
// confirm before a held action goes on. The WebAuthn challenge in
// PasskeyAssertionOptions is the SHA-256 of the action's payloadToSign, so
// an assertion authorizes that action and no other.
type ScaChallenge struct {
	ID               string   `json:"id"`
	ExpiresAt        string   `json:"expiresAt"`
	Factor           string   `json:"factor"`
	AvailableFactors []string `json:"availableFactors"`
	Purpose          string   `json:"purpose,omitempty"`
	// PasskeyAssertionOptions are the options of navigator.credentials.get
	// (challenge and credential ids base64url): PASSKEY only.
	PasskeyAssertionOptions *PasskeyAssertionOptions `json:"passkeyAssertionOptions,omitempty"`
	// Action and Reasons (extension) say what is held and why the
	// policy holds it.
	Action  string   `json:"action"`
	Reasons []string `json:"reasons"`
	// SecurePaymentConfirmation (extension), on a payment with a
	// passkey: the data of a PaymentRequest for the browser's own
	// confirmation, whose payee and total the service checks.
	SecurePaymentConfirmation *SecurePaymentConfirmation `json:"securePaymentConfirmation,omitempty"`
	// CodeSentTo (extension), on EMAIL_OTP: the masked address the code
	// went to.
	CodeSentTo string `json:"codeSentTo,omitempty"`
}

// PasskeyAssertionOptions are WebAuthn PublicKeyCredentialRequestOptions.
type PasskeyAssertionOptions struct {
	Challenge        string              `json:"challenge"`
	RPID             string              `json:"rpId"`
	AllowCredentials []PasskeyDescriptor `json:"allowCredentials"`
	UserVerification string              `json:"userVerification"`
	Timeout          int                 `json:"timeout"`
}

// PasskeyDescriptor names one allowed credential.
type PasskeyDescriptor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// SecurePaymentConfirmation is the data of a "secure-payment-confirmation"
// payment method: the browser shows the payee and the total, and the
// assertion's clientDataJSON carries them back.
type SecurePaymentConfirmation struct {
	RPID          string       `json:"rpId"`
	CredentialIDs []string     `json:"credentialIds"`
	Challenge     string       `json:"challenge"`
	PayeeName     string       `json:"payeeName"`
	Total         PaymentTotal `json:"total"`
	Instrument    string       `json:"instrumentDisplayName"`
	Timeout       int          `json:"timeout"`
}

// PaymentTotal is a PaymentCurrencyAmount: an ISO 4217 code and a decimal
// value in major units ("150.00").
type PaymentTotal struct {
	Currency string `json:"currency"`
	Value    string `json:"value"`
}

// ScaAuthorization is the reference's proof of an ScaChallenge: code (an
// e-mailed code here) or passkeyAssertion with origin.
type ScaAuthorization struct {
	Code             *string           `json:"code"`
	PasskeyAssertion *PasskeyAssertion `json:"passkeyAssertion"`
	Origin           *string           `json:"origin"`
	EndUserIPAddress *string           `json:"endUserIpAddress"`
}

// ScaChallengeStatus is a step-up as GET /sca/challenges/{id} shows it and
// POST /sca/challenges/{id}/authorize answers it (extension): once
// AUTHORIZED, the held signed retry may be sent.
type ScaChallengeStatus struct {
	ID           string `json:"id"`
	AccountID    string `json:"accountId"`
	CustomerID   string `json:"customerId"`
	Action       string `json:"action"`
	Status       string `json:"status"`
	AuthorizedAt string `json:"authorizedAt,omitempty"`
	ExpiresAt    string `json:"expiresAt"`
}

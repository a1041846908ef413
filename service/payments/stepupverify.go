package payments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Checking a step-up's passkey assertion. Two ceremonies give one:
//
//   - navigator.credentials.get with the challenge options (clientDataJSON
//     type "webauthn.get"): go-webauthn checks it (verifyAssertion), with
//     the step-up's payload hash as the challenge.
//   - Secure Payment Confirmation, a PaymentRequest of the method
//     "secure-payment-confirmation" (type "payment.get"): the browser itself
//     shows the payee and the total before the authenticator signs, and
//     clientDataJSON carries what it showed in its "payment" member.
//     go-webauthn checks "webauthn.get" only, so this file checks it as the
//     SPC specification says (§ "Verifying an Authentication Assertion"):
//     type, challenge, origin, rpId hash, user presence and verification,
//     the signature over authenticatorData ‖ SHA-256(clientDataJSON) with the
//     credential's public key, and the sign counter; and then that the
//     payment data is the quote's: payee name, currency and value.
//
// Either way the assertion must be made by a passkey of the wallet the
// step-up holds, with user verification, for this step-up's challenge.

// spcClientData is clientDataJSON of an SPC assertion.
type spcClientData struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	Origin    string `json:"origin"`
	Payment   *struct {
		RPID       string `json:"rpId"`
		TopOrigin  string `json:"topOrigin"`
		PayeeName  string `json:"payeeName"`
		Instrument struct {
			DisplayName string `json:"displayName"`
		} `json:"instrument"`
		Total struct {
			Currency string `json:"currency"`
			Value    string `json:"value"`
		} `json:"total"`
	} `json:"payment"`
}

// checkStepUpAssertion checks auth's passkey assertion for the step-up u
// and records the credential's new sign counter.
func (s *Service) checkStepUpAssertion(ctx context.Context, tx store.Tx, u *store.StepUp, auth *wire.ScaAuthorization) error {
	a := auth.PasskeyAssertion
	refused := func(why string) error {
		return &Error{Code: CodeInvalidInput, Message: "the passkey confirmation was refused: " + why,
			Details: map[string]any{"errors": []wire.FieldError{{Field: "passkeyAssertion", Message: why}}}}
	}
	all, err := tx.ListCredentials(ctx, u.AccountID)
	if err != nil {
		return err
	}
	var cred *store.Credential
	for i := range all {
		if all[i].Type == wire.TypePasskey && all[i].CredentialID == a.CredentialID {
			cred = &all[i]
		}
	}
	if cred == nil {
		return refused("it was made with a passkey that is not one of this wallet's")
	}
	if s.mode == ModeSandbox && a.Signature == sandboxPasskeySignature {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(a.ClientDataJSON)
	if err != nil {
		return refused("clientDataJson is not base64url")
	}
	var cd spcClientData
	if err := json.Unmarshal(raw, &cd); err != nil {
		return refused("clientDataJson is not JSON")
	}
	if cd.Origin != *auth.Origin {
		return refused("origin is not the origin the assertion was made on (" + cd.Origin + ")")
	}
	user, err := passkeyUserOf(u.AccountID, all)
	if err != nil {
		return err
	}
	var rec *webauthn.Credential
	switch cd.Type {
	case "webauthn.get":
		rec, err = s.verifyAssertion(a, u.PayloadHash, user, cred.CredentialID)
		if err != nil {
			return refused(errorMessage(err))
		}
	case "payment.get":
		if u.Payment == nil {
			return refused("a Secure Payment Confirmation is only for a payment")
		}
		rec, err = s.verifySPC(a, &cd, u, user, cred.CredentialID)
		if err != nil {
			return err
		}
	default:
		return refused("clientDataJson has type " + cd.Type + ", not webauthn.get or payment.get")
	}
	record, err := passkeyRecord(rec)
	if err != nil {
		return err
	}
	return tx.UpdatePasskey(ctx, cred.ID, record, int64(rec.Authenticator.SignCount), s.now())
}

// errorMessage is the message of an *Error, or the error's text.
func errorMessage(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Message
	}
	return err.Error()
}

// verifySPC checks a Secure Payment Confirmation assertion (see the top of
// the file) and returns the credential with its counter advanced.
func (s *Service) verifySPC(a *wire.PasskeyAssertion, cd *spcClientData, u *store.StepUp, user *passkeyUser, credentialID string) (*webauthn.Credential, error) {
	refused := func(field, why string) error {
		return &Error{Code: CodeInvalidInput, Message: "the payment confirmation was refused: " + why,
			Details: map[string]any{"errors": []wire.FieldError{{Field: field, Message: why}}}}
	}
	var want wire.SecurePaymentConfirmation
	if err := json.Unmarshal(u.Payment, &want); err != nil {
		return nil, err
	}
	switch {
	case cd.Challenge != b64(u.PayloadHash):
		return nil, refused("passkeyAssertion", "it was made for another action (its challenge is not this payment's)")
	case !slices.Contains(s.cfg.WebAuthnOrigins, cd.Origin):
		return nil, refused("origin", "the page's origin "+cd.Origin+" is not one of the wallet's")
	case cd.Payment == nil:
		return nil, refused("passkeyAssertion", "clientDataJson has no payment data")
	case cd.Payment.RPID != s.cfg.WebAuthnRPID:
		return nil, refused("passkeyAssertion", "the payment data names relying party "+cd.Payment.RPID)
	case cd.Payment.TopOrigin != "" && !slices.Contains(s.cfg.WebAuthnOrigins, cd.Payment.TopOrigin):
		return nil, refused("passkeyAssertion", "the payment was confirmed inside another site ("+cd.Payment.TopOrigin+")")
	case cd.Payment.Instrument.DisplayName != want.Instrument:
		return nil, refused("passkeyAssertion", "the browser showed the instrument "+cd.Payment.Instrument.DisplayName+", not "+want.Instrument)
	case cd.Payment.PayeeName != want.PayeeName:
		return nil, refused("passkeyAssertion", "the browser showed the payee "+cd.Payment.PayeeName+", not "+want.PayeeName)
	case cd.Payment.Total.Currency != want.Total.Currency || cd.Payment.Total.Value != want.Total.Value:
		return nil, refused("passkeyAssertion", "the browser showed the total "+cd.Payment.Total.Value+" "+cd.Payment.Total.Currency+
			", not "+want.Total.Value+" "+want.Total.Currency)
	}
	var rec *webauthn.Credential
	for i := range user.creds {
		if b64(user.creds[i].ID) == credentialID {
			rec = &user.creds[i]
		}
	}
	if rec == nil {
		return nil, refused("passkeyAssertion", "it was made with a passkey that is not one of this wallet's")
	}
	authData, err := base64.RawURLEncoding.DecodeString(a.AuthenticatorData)
	if err != nil {
		return nil, refused("passkeyAssertion.authenticatorData", "must be base64url without padding")
	}
	var ad protocol.AuthenticatorData
	if err := ad.Unmarshal(authData); err != nil {
		return nil, refused("passkeyAssertion.authenticatorData", "not WebAuthn authenticator data")
	}
	rpHash := sha256.Sum256([]byte(s.cfg.WebAuthnRPID))
	switch {
	case !bytes.Equal(ad.RPIDHash, rpHash[:]):
		return nil, refused("passkeyAssertion", "it was made for another relying party")
	case !ad.Flags.UserPresent() || !ad.Flags.UserVerified():
		return nil, refused("passkeyAssertion", "the authenticator did not verify the person (user verification is required)")
	}
	sig, err := base64.RawURLEncoding.DecodeString(a.Signature)
	if err != nil {
		return nil, refused("passkeyAssertion.signature", "must be base64url without padding")
	}
	clientData, _ := base64.RawURLEncoding.DecodeString(a.ClientDataJSON)
	cdHash := sha256.Sum256(clientData)
	key, err := webauthncose.ParsePublicKey(rec.PublicKey)
	if err != nil {
		return nil, refused("passkeyAssertion", "this passkey's public key cannot be read")
	}
	ok, err := webauthncose.VerifySignature(key, append(append([]byte(nil), authData...), cdHash[:]...), sig)
	if err != nil || !ok {
		return nil, refused("passkeyAssertion.signature", "the signature does not verify with this passkey")
	}
	if ad.Counter != 0 || rec.Authenticator.SignCount != 0 {
		if ad.Counter <= rec.Authenticator.SignCount {
			return nil, refused("passkeyAssertion", "the authenticator's signature counter did not advance (a cloned passkey?)")
		}
	}
	out := *rec
	out.Authenticator.SignCount = ad.Counter
	return &out, nil
}

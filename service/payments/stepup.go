package payments

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// # Step-up: the person's own yes to one exact action
//
// A valid wallet session signs whatever its page asks for 15 minutes. The
// operator's step-up policy (StepUpPolicy) names the actions that need one
// more yes from the person: a payment above an amount, the first payment to
// a recipient or one to a recipient added recently, a recovery-phrase
// export, adding or removing a sign-in method, changing the e-mail; raising
// one's own limits always needs it (limits.go). Such an action is held and
// carries an ScaChallenge (the reference's shape):
//
//   - A payment (quote execute from an embedded wallet) answers 200 with the
//     quote PENDING_AUTHORIZATION and its scaChallenge; POST
//     /quotes/{quoteId}/authorize with the proof executes it.
//   - A signed retry (export, credentials, e-mail, limits, transfer-out)
//     answers its first call's 202 with scaChallenge beside payloadToSign;
//     POST /sca/challenges/{id}/authorize takes the proof, and only then does
//     the signed retry go through (it consumes the step-up in its
//     transaction).
//
// The proof is bound to the action: the WebAuthn challenge is the SHA-256
// of the action's payloadToSign (which names the quote, its amounts, a
// fresh nonce), so an assertion for one payment cannot authorize another,
// a changed amount or the same action twice (a step-up is used once). A
// person with a passkey confirms with it (user verification required); in
// Chromium the page may use Secure Payment Confirmation, where the browser
// itself shows the payee and the total, and the service checks them in
// the assertion's clientDataJSON against the quote (stepupverify.go). A
// person without a passkey gets a 6-digit code by e-mail that names the
// action, kept as a keyed hash bound to the step-up.
//
// Failed proofs count per wallet: five within 15 minutes lock the wallet's
// money actions (execute, transfer-out, every authorize) for 30 minutes,
// 423 ACCOUNT_LOCKED with details {lockedUntil, failedAttempts}, and the
// person is told by e-mail.

// Actions a step-up holds.
const (
	ActionPayment              = "PAYMENT"
	ActionTransfer             = "TRANSFER"
	ActionRecoveryPhraseExport = "RECOVERY_PHRASE_EXPORT"
	ActionSignInMethodAdd      = "SIGN_IN_METHOD_ADD"
	ActionSignInMethodRemove   = "SIGN_IN_METHOD_REMOVE"
	ActionEmailChange          = "EMAIL_CHANGE"
	ActionLimitsLoosen         = "LIMITS_LOOSEN"
)

// Reasons the policy gives for holding an action.
const (
	ReasonAmountOverThreshold     = "AMOUNT_OVER_THRESHOLD"
	ReasonFirstPaymentToRecipient = "FIRST_PAYMENT_TO_RECIPIENT"
	ReasonRecipientAddedRecently  = "RECIPIENT_ADDED_RECENTLY"
	ReasonSensitiveAction         = "SENSITIVE_ACTION"
	ReasonLimitsLoosened          = "LIMITS_LOOSENED"
)

// Factors of a step-up: the reference's PASSKEY, and EMAIL_OTP
// (extension) for a person without a passkey.
const (
	FactorPasskey  = "PASSKEY"
	FactorEmailOTP = "EMAIL_OTP"
)

// Error codes of step-up.
const (
	CodeAccountLocked   = "ACCOUNT_LOCKED"    // 423
	CodeScaNotCompleted = "SCA_NOT_COMPLETED" // 403: the signed retry of a held action came before its proof
)

// Lock-out: failures within the window that lock, and for how long.
const (
	stepUpMaxFailures = 5
	stepUpFailWindow  = 15 * time.Minute
	stepUpLockFor     = 30 * time.Minute
	// stepUpCodeResends bounds the e-mails of one step-up's code.
	stepUpCodeResends = 5
	// passkeyTimeoutMS is the WebAuthn/SPC prompt's timeout.
	passkeyTimeoutMS = 120_000
)

// stepUpNeed is an action the policy holds, as the operation that found
// it describes it.
type stepUpNeed struct {
	action    string
	reasons   []string
	accountID string
	// what is the action in a person's words, for the e-mailed code ("a
	// payment of 150.00 USD to Jane Doe").
	what string
	// payment is what Secure Payment Confirmation shows (payments only).
	payment *wire.SecurePaymentConfirmation
}

// issuedStepUp is a step-up a transaction stored, with the code to e-mail
// after it commits (EMAIL_OTP).
type issuedStepUp struct {
	row       *store.StepUp
	challenge *wire.ScaChallenge
	code, to  string
	what      string
}

// newStepUp stores a step-up of need bound to payload (the action's
// payloadToSign) and target (the quote, or the signed retry's Request id),
// valid until expires. The factor is PASSKEY when the wallet has one,
// EMAIL_OTP otherwise (to the wallet's e-mail). With codeNow, an EMAIL_OTP
// step-up gets its code at once, for the caller to mail after its commit
// (a payment); otherwise the first code is sent by the resend call, which
// the page makes when it shows the step (a signed retry's step-up, whose
// operations end in many places).
func (s *Service) newStepUp(ctx context.Context, tx store.Tx, need *stepUpNeed, target, payload string, expires time.Time, codeNow bool) (*issuedStepUp, error) {
	acct, err := tx.GetInternalAccount(ctx, need.accountID)
	if err != nil {
		return nil, err
	}
	passkeys, email, err := confirmWays(ctx, tx, acct.ID, acct.CustomerID)
	if err != nil {
		return nil, err
	}
	hash := sha256.Sum256([]byte(payload))
	now := s.now()
	row := &store.StepUp{
		ID: ids.New("ScaChallenge"), AccountID: acct.ID, CustomerID: acct.CustomerID, Action: need.action,
		TargetID: target, PayloadHash: hash[:], Reasons: need.reasons, Status: "PENDING",
		CreatedAt: now, ExpiresAt: expires,
	}
	out := &issuedStepUp{row: row, what: need.what}
	switch {
	case len(passkeys) > 0:
		row.Factor = FactorPasskey
		if need.payment != nil {
			p := *need.payment
			p.RPID, p.CredentialIDs, p.Challenge = s.cfg.WebAuthnRPID, passkeys, b64(hash[:])
			p.Timeout = passkeyTimeoutMS
			if row.Payment, err = json.Marshal(p); err != nil {
				return nil, err
			}
		}
	case email != "":
		row.Factor = FactorEmailOTP
		if codeNow {
			code, err := otpCode()
			if err != nil {
				return nil, err
			}
			row.CodeHash, row.CodesSent = s.stepUpCodeMAC(row, code), 1
			out.code, out.to = code, email
		}
	default:
		return nil, errorf(CodeForbidden, "this action needs a confirmation with a passkey or an e-mailed code, and the wallet has neither: add a passkey or an e-mail sign-in first")
	}
	if err := tx.CreateStepUp(ctx, row); err != nil {
		return nil, err
	}
	out.challenge = s.scaChallengeJSON(row, passkeys, email)
	return out, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// stepUpCodeMAC binds an e-mailed code to its step-up and wallet.
func (s *Service) stepUpCodeMAC(u *store.StepUp, code string) []byte {
	return s.codeMAC(u.ID, u.AccountID, code)
}

// scaChallengeJSON is the ScaChallenge of a pending step-up.
func (s *Service) scaChallengeJSON(u *store.StepUp, passkeys []string, email string) *wire.ScaChallenge {
	out := &wire.ScaChallenge{
		ID: u.ID, ExpiresAt: timestamp(u.ExpiresAt), Factor: u.Factor, AvailableFactors: []string{u.Factor},
		Purpose: purposeOf(u.Action), Action: u.Action, Reasons: u.Reasons,
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	switch u.Factor {
	case FactorPasskey:
		o := &wire.PasskeyAssertionOptions{Challenge: b64(u.PayloadHash), RPID: s.cfg.WebAuthnRPID,
			UserVerification: "required", Timeout: passkeyTimeoutMS, AllowCredentials: []wire.PasskeyDescriptor{}}
		for _, id := range passkeys {
			o.AllowCredentials = append(o.AllowCredentials, wire.PasskeyDescriptor{Type: "public-key", ID: id})
		}
		out.PasskeyAssertionOptions = o
		if u.Payment != nil {
			var p wire.SecurePaymentConfirmation
			if json.Unmarshal(u.Payment, &p) == nil {
				out.SecurePaymentConfirmation = &p
			}
		}
	case FactorEmailOTP:
		if u.CodesSent > 0 {
			out.CodeSentTo = maskEmail(email)
		}
	}
	return out
}

// purposeOf is the reference's informational purpose of an action.
func purposeOf(action string) string {
	switch action {
	case ActionPayment:
		return "PAYOUT"
	case ActionTransfer:
		return "TRANSFER"
	}
	return ""
}

// challengeOf is the ScaChallenge of a stored step-up as it is now (the
// wallet's passkeys may have changed since it was made).
func (s *Service) challengeOf(ctx context.Context, tx store.Tx, u *store.StepUp) (*wire.ScaChallenge, error) {
	passkeys, email, err := confirmWays(ctx, tx, u.AccountID, u.CustomerID)
	if err != nil {
		return nil, err
	}
	return s.scaChallengeJSON(u, passkeys, email), nil
}

// confirmWays are the ways the wallet's person can confirm an action: the
// credential ids of its passkeys, and the address codes go to (its e-mail
// sign-in's, else the customer's e-mail; "" when there is neither).
func confirmWays(ctx context.Context, tx store.Tx, accountID, customerID string) (passkeys []string, email string, err error) {
	creds, err := tx.ListCredentials(ctx, accountID)
	if err != nil {
		return nil, "", err
	}
	for _, c := range creds {
		switch c.Type {
		case wire.TypePasskey:
			passkeys = append(passkeys, c.CredentialID)
		case wire.TypeEmailOTP:
			email = c.Nickname
		}
	}
	if email == "" && customerID != "" {
		if cust, err := tx.GetCustomer(ctx, customerID); err == nil {
			email = cust.Email
		}
	}
	return passkeys, email, nil
}

// mailStepUpCode e-mails a step-up's code, after the transaction that made
// it committed. A failure is logged: the page offers to send it again.
func (s *Service) mailStepUpCode(ctx context.Context, st *issuedStepUp) {
	if st == nil || st.code == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mailTimeout)
	defer cancel()
	msg := mail.Message{
		From:    s.cfg.MailFrom,
		To:      st.to,
		Subject: "Confirm " + st.what,
		Text: "Your confirmation code is " + st.code + "\n\n" +
			"It confirms " + st.what + " and nothing else, until " + st.row.ExpiresAt.Format("15:04 MST") + ".\n" +
			"If you did not ask for this, do not give the code to anyone, and sign out\n" +
			"your other sessions in your wallet's Security page.\n",
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "step-up code e-mail not sent", "stepUp", st.row.ID, "err", err)
	}
}

// ---- the lock

// checkLock refuses a money action of a locked wallet.
func (s *Service) checkLock(ctx context.Context, tx store.Tx, accountID string) error {
	until, failures, err := tx.AccountLock(ctx, accountID)
	if err != nil {
		return err
	}
	if now := s.now(); until.After(now) {
		return lockedAccount(until, failures)
	}
	return nil
}

func lockedAccount(until time.Time, failures int) *Error {
	return &Error{Code: CodeAccountLocked,
		Message: "too many failed confirmations: payments from this wallet are locked until " + timestamp(until) + "; try again after that",
		Details: map[string]any{"lockedUntil": timestamp(until), "failedAttempts": failures, "suspended": false}}
}

// startAttempt counts an attempt at u's proof before it is checked, in a
// transaction of its own that commits first: at most stepUpMaxFailures
// proofs of a wallet are ever checked within the window, however many
// arrive at once. A wallet already at the limit is locked (if it is not
// yet) and refused. The attempt stays counted unless finishAttempt
// uncounts it with the good proof.
func (s *Service) startAttempt(ctx context.Context, u *store.StepUp) (string, error) {
	id := ids.New("Attempt")
	var newlyLocked bool
	var until time.Time
	var n int
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		newlyLocked = false
		now := s.now()
		if err := s.checkLock(ctx, tx, u.AccountID); err != nil {
			return err
		}
		var err error
		if n, err = tx.StepUpAttempts(ctx, u.AccountID, now.Add(-stepUpFailWindow)); err != nil {
			return err
		}
		if n >= stepUpMaxFailures {
			until, newlyLocked = now.Add(stepUpLockFor), true
			return tx.LockAccount(ctx, u.AccountID, until, n)
		}
		return tx.AddStepUpAttempt(ctx, id, u.AccountID, now)
	})
	if err != nil {
		return "", err
	}
	if newlyLocked {
		s.lockedOut(ctx, u, until, n)
		return "", lockedAccount(until, n)
	}
	return id, nil
}

// stepUpFailed tells of a refused proof, whose attempt stays counted: the
// security log's record, and, when it was the last one the window allows,
// the lock (taken by one of the failures that reach it) and its e-mail. It
// returns the error to answer: the refusal with the tries left, or the
// lock.
func (s *Service) stepUpFailed(ctx context.Context, u *store.StepUp, refusal *Error, user EndUser) error {
	ctx = context.WithoutCancel(ctx)
	s.recordSecurityAlone(ctx, securityRecord{customerID: u.CustomerID, accountID: u.AccountID, typ: SecurityStepUpFailed,
		details: map[string]any{"action": u.Action, "factor": u.Factor, "challengeId": u.ID, "reason": refusal.Message}, user: &user})
	var newlyLocked bool
	var until time.Time
	var n int
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		newlyLocked = false
		now := s.now()
		var err error
		if n, err = tx.StepUpAttempts(ctx, u.AccountID, now.Add(-stepUpFailWindow)); err != nil || n < stepUpMaxFailures {
			return err
		}
		cur, _, err := tx.AccountLock(ctx, u.AccountID)
		if err != nil || cur.After(now) {
			until = cur
			return err
		}
		until, newlyLocked = now.Add(stepUpLockFor), true
		return tx.LockAccount(ctx, u.AccountID, until, n)
	})
	if err != nil {
		// The attempt is counted already; only the lock's own record
		// is missing, and the next attempt takes the lock.
		s.log.ErrorContext(ctx, "step-up lock not written", "stepUp", u.ID, "err", err)
		return refusal
	}
	if newlyLocked {
		s.lockedOut(ctx, u, until, n)
	}
	if n >= stepUpMaxFailures {
		return lockedAccount(until, n)
	}
	if refusal.Details == nil {
		refusal.Details = map[string]any{}
	}
	refusal.Details["failedAttempts"] = n
	refusal.Details["attemptsLeft"] = stepUpMaxFailures - n
	return refusal
}

// lockedOut tells of a lock just taken: the security log and the e-mail.
func (s *Service) lockedOut(ctx context.Context, u *store.StepUp, until time.Time, n int) {
	s.recordSecurityAlone(ctx, securityRecord{customerID: u.CustomerID, accountID: u.AccountID, typ: SecurityLockedOut,
		details: map[string]any{"until": timestamp(until), "failedAttempts": n, "action": "PAYMENTS"}})
	s.mailLocked(ctx, u, until)
}

// mailLocked tells the person their wallet's payments are locked.
func (s *Service) mailLocked(ctx context.Context, u *store.StepUp, until time.Time) {
	var to string
	_ = s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		_, to, err = confirmWays(ctx, tx, u.AccountID, u.CustomerID)
		return err
	})
	if to == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, mailTimeout)
	defer cancel()
	msg := mail.Message{
		From:    s.cfg.MailFrom,
		To:      to,
		Subject: "Payments from your wallet are locked for a while",
		Text: "There were " + strconv.Itoa(stepUpMaxFailures) + " failed confirmations of actions in your wallet within " +
			minutes(stepUpFailWindow) + ",\nso payments from it are locked until " + until.Format("15:04 MST on 2 January 2006") + ".\n\n" +
			"If that was not you, someone may be signed in to your wallet: open its Security page\n" +
			"and sign out every session you do not recognise.\n",
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "lock-out e-mail not sent", "account", u.AccountID, "err", err)
	}
}

// ---- authorizing

// checkProof checks auth against the pending step-up u in tx, and marks it
// AUTHORIZED. A refused proof is returned as *Error (for stepUpFailed);
// other errors are the store's.
func (s *Service) checkProof(ctx context.Context, tx store.Tx, u *store.StepUp, auth *wire.ScaAuthorization) error {
	now := s.now()
	switch {
	case u.Status != "PENDING":
		return errorf(CodeConflict, "this confirmation was already given")
	case !now.Before(u.ExpiresAt):
		return errorf(CodeConflict, "this confirmation expired at "+timestamp(u.ExpiresAt)+"; start the action again")
	}
	if err := s.checkLock(ctx, tx, u.AccountID); err != nil {
		return err
	}
	switch u.Factor {
	case FactorEmailOTP:
		if auth.Code == nil {
			return invalidField("code", "required: the code e-mailed for this confirmation")
		}
		code := strings.TrimSpace(*auth.Code)
		ok := (u.CodeHash != nil && subtle.ConstantTimeCompare(s.stepUpCodeMAC(u, code), u.CodeHash) == 1) ||
			(s.mode == ModeSandbox && code == sandboxStepUpCode)
		if !ok {
			return &Error{Code: CodeInvalidInput, Message: "that is not the code we e-mailed for this confirmation; check it and try again",
				Details: map[string]any{"errors": []wire.FieldError{{Field: "code", Message: "is not the code e-mailed for this confirmation"}}}}
		}
	case FactorPasskey:
		if err := s.checkStepUpAssertion(ctx, tx, u, auth); err != nil {
			return err
		}
	}
	won, err := tx.AdvanceStepUp(ctx, u.ID, "PENDING", "AUTHORIZED", now)
	if err != nil {
		return err
	}
	if !won {
		return errorf(CodeConflict, "this confirmation was already given")
	}
	u.Status, u.AuthorizedAt = "AUTHORIZED", now
	return nil
}

// sandboxStepUpCode is the code the reference's sandbox always accepts
// (facts: "In sandbox, the SMS code is always 123456"); sandbox mode only.
const sandboxStepUpCode = "123456"

// checkAuthorizationFields names every missing or conflicting member of an
// ScaAuthorization for a step-up of the factor.
func checkAuthorizationFields(auth *wire.ScaAuthorization, factor string) error {
	var fe fieldErrors
	if auth == nil {
		return errorf(CodeInvalidRequestFormat, "the body must be a JSON object: {code} or {passkeyAssertion, origin}")
	}
	switch factor {
	case FactorEmailOTP:
		if auth.Code == nil || strings.TrimSpace(*auth.Code) == "" {
			fe.add("code", "required: the 6-digit code e-mailed for this confirmation")
		}
		if auth.PasskeyAssertion != nil {
			fe.add("passkeyAssertion", "this confirmation is by e-mailed code, not by passkey")
		}
	case FactorPasskey:
		if auth.Code != nil {
			fe.add("code", "this confirmation is by passkey, not by code")
		}
		checkAssertionFields(auth.PasskeyAssertion, &fe, "passkeyAssertion")
		if auth.Origin == nil || *auth.Origin == "" {
			fe.add("origin", "required with passkeyAssertion: the origin the page ran the passkey prompt on")
		}
	}
	if auth.EndUserIPAddress != nil && len(*auth.EndUserIPAddress) > 64 {
		fe.add("endUserIpAddress", "at most 64 characters")
	}
	if e := fe.err(); e != nil {
		return e
	}
	return nil
}

// loadStepUp reads a step-up the platform may see (an unknown id is 404).
func loadStepUp(ctx context.Context, tx store.Tx, id string) (*store.StepUp, error) {
	u, err := tx.GetStepUp(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(CodeNotFound, "no confirmation "+id)
	}
	return u, err
}

// authorizeIn takes a proof of the step-up load finds: the body is
// checked first (a malformed one counts nothing), the attempt is counted
// (startAttempt), then the proof is checked in fn's transaction, where then
// runs the held action. A good proof uncounts its attempt in that same
// transaction; a refused one stays counted (stepUpFailed); one that ended
// otherwise (not enough money, the store) is uncounted afterwards.
func authorizeIn[T any](ctx context.Context, s *Service, turn string, load func(tx store.Tx) (*store.StepUp, error),
	auth *wire.ScaAuthorization, user EndUser, then func(tx store.Tx, u *store.StepUp) (T, error)) (T, error) {
	var zero T
	u, err := read(ctx, s, func(tx store.Tx) (*store.StepUp, error) {
		u, err := load(tx)
		if err != nil {
			return nil, err
		}
		now := s.now()
		switch {
		case u.Status != "PENDING":
			return nil, errorf(CodeConflict, "this confirmation was already given")
		case !now.Before(u.ExpiresAt):
			return nil, errorf(CodeConflict, "this confirmation expired at "+timestamp(u.ExpiresAt)+"; start the action again")
		}
		return u, checkAuthorizationFields(auth, u.Factor)
	})
	if err != nil {
		return zero, err
	}
	attempt, err := s.startAttempt(ctx, u)
	if err != nil {
		return zero, err
	}
	var refused *Error
	out, err := commit(ctx, s, turn, nil, func(tx store.Tx) (T, error) {
		refused = nil
		u, err := load(tx)
		if err != nil {
			return zero, err
		}
		if err := s.checkProof(ctx, tx, u, auth); err != nil {
			var e *Error
			if errors.As(err, &e) && proofRefusal(e) {
				refused = e
			}
			return zero, err
		}
		if err := tx.DeleteStepUpAttempt(ctx, attempt); err != nil {
			return zero, err
		}
		if err := s.recordSecurity(ctx, tx, securityRecord{customerID: u.CustomerID, accountID: u.AccountID, typ: SecurityStepUpPassed,
			details: map[string]any{"action": u.Action, "factor": u.Factor, "challengeId": u.ID}, user: &user}); err != nil {
			return zero, err
		}
		return then(tx, u)
	})
	switch {
	case err == nil:
		return out, nil
	case refused != nil:
		return zero, s.stepUpFailed(ctx, u, refused, user)
	}
	// Not a verdict on the proof: the attempt does not count.
	if derr := s.store.Tx(context.WithoutCancel(ctx), func(tx store.Tx) error { return tx.DeleteStepUpAttempt(ctx, attempt) }); derr != nil {
		s.log.ErrorContext(ctx, "step-up attempt not uncounted", "stepUp", u.ID, "err", derr)
	}
	return zero, err
}

// proofRefusal tells a refused proof (which counts towards the lock) from
// other refusals (an expired or used step-up, a lock already on, a
// malformed body).
func proofRefusal(e *Error) bool {
	switch e.Code {
	case CodeInvalidInput, CodeUnauthorized:
		return true
	}
	return false
}

// AuthorizeChallenge is POST /sca/challenges/{challengeId}/authorize: the
// proof of a signed retry's step-up. The retry may be sent afterwards.
func (s *Service) AuthorizeChallenge(ctx context.Context, id string, req wire.ScaAuthorization, user EndUser) (wire.ScaChallengeStatus, error) {
	auth := &req
	return authorizeIn(ctx, s, "", func(tx store.Tx) (*store.StepUp, error) {
		u, err := loadStepUp(ctx, tx, id)
		if err == nil && u.Action == ActionPayment {
			return nil, invalidField("challengeId", "is a payment's confirmation: authorize it with POST /quotes/"+u.TargetID+"/authorize")
		}
		return u, err
	}, auth, user, func(tx store.Tx, u *store.StepUp) (wire.ScaChallengeStatus, error) {
		return challengeStatusJSON(u), nil
	})
}

// GetChallenge is GET /sca/challenges/{challengeId}: a step-up, with the
// wallet and customer it holds an action of.
func (s *Service) GetChallenge(ctx context.Context, id string) (wire.ScaChallengeStatus, error) {
	return read(ctx, s, func(tx store.Tx) (wire.ScaChallengeStatus, error) {
		u, err := loadStepUp(ctx, tx, id)
		if err != nil {
			return wire.ScaChallengeStatus{}, err
		}
		return challengeStatusJSON(u), nil
	})
}

func challengeStatusJSON(u *store.StepUp) wire.ScaChallengeStatus {
	out := wire.ScaChallengeStatus{ID: u.ID, AccountID: u.AccountID, CustomerID: u.CustomerID, Action: u.Action,
		Status: u.Status, ExpiresAt: timestamp(u.ExpiresAt)}
	if !u.AuthorizedAt.IsZero() {
		out.AuthorizedAt = timestamp(u.AuthorizedAt)
	}
	return out
}

// ResendChallengeCode is POST /sca/challenges/{challengeId}/resend: the
// code of an EMAIL_OTP step-up, sent the first time or again (the old one
// stops working); the expiry does not move.
func (s *Service) ResendChallengeCode(ctx context.Context, id string) error {
	return s.resendCode(ctx, func(tx store.Tx) (*store.StepUp, error) { return loadStepUp(ctx, tx, id) })
}

func (s *Service) resendCode(ctx context.Context, load func(tx store.Tx) (*store.StepUp, error)) error {
	st, err := commit(ctx, s, "", nil, func(tx store.Tx) (*issuedStepUp, error) {
		u, err := load(tx)
		if err != nil {
			return nil, err
		}
		now := s.now()
		switch {
		case u.Factor != FactorEmailOTP:
			return nil, errorf(CodeConflict, "this confirmation is by passkey: there is no code to send")
		case u.Status != "PENDING":
			return nil, errorf(CodeConflict, "this confirmation was already given")
		case !now.Before(u.ExpiresAt):
			return nil, errorf(CodeConflict, "this confirmation expired at "+timestamp(u.ExpiresAt)+"; start the action again")
		case u.CodesSent >= stepUpCodeResends:
			return nil, rateLimited(ReasonCodeRecentlySent, "the code was sent too many times; start the action again", 60)
		}
		if err := s.checkLock(ctx, tx, u.AccountID); err != nil {
			return nil, err
		}
		code, err := otpCode()
		if err != nil {
			return nil, err
		}
		if err := tx.SetStepUpCode(ctx, u.ID, s.stepUpCodeMAC(u, code), now); err != nil {
			return nil, err
		}
		passkeys, to, err := confirmWays(ctx, tx, u.AccountID, u.CustomerID)
		if err != nil {
			return nil, err
		}
		return &issuedStepUp{row: u, challenge: s.scaChallengeJSON(u, passkeys, to), code: code, to: to, what: actionWords(u)}, nil
	})
	if err != nil {
		return err
	}
	s.mailStepUpCode(ctx, st)
	return nil
}

// actionWords names a stored step-up's action for a resent code's e-mail.
func actionWords(u *store.StepUp) string {
	if u.Payment != nil {
		var p wire.SecurePaymentConfirmation
		if json.Unmarshal(u.Payment, &p) == nil {
			return fmt.Sprintf("a payment of %s %s to %s", p.Total.Value, p.Total.Currency, p.PayeeName)
		}
	}
	return actionNames[u.Action]
}

// actionNames are the actions in a person's words.
var actionNames = map[string]string{
	ActionPayment:              "a payment",
	ActionTransfer:             "a transfer out of your wallet",
	ActionRecoveryPhraseExport: "showing your recovery phrase",
	ActionSignInMethodAdd:      "adding a sign-in method",
	ActionSignInMethodRemove:   "removing a sign-in method",
	ActionEmailChange:          "changing your e-mail address",
	ActionLimitsLoosen:         "raising your limits",
}

// ---- the signed retry's side

// consumeStepUp is completeRetry's check of a held signed retry: when a
// step-up was made for the challenge, it must be AUTHORIZED, and it is
// used here, in the retry's transaction.
func (s *Service) consumeStepUp(ctx context.Context, tx store.Tx, c *store.Challenge) error {
	u, err := tx.StepUpOf(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if u.Status == "PENDING" {
		ch, err := s.challengeOf(ctx, tx, u)
		if err != nil {
			return err
		}
		return &Error{Code: CodeScaNotCompleted,
			Message: "confirm this first (" + actionNames[u.Action] + "): authorize " + u.ID + " with POST /sca/challenges/" + u.ID + "/authorize, then send this again",
			Details: map[string]any{"scaChallenge": ch}}
	}
	won, err := tx.AdvanceStepUp(ctx, u.ID, "AUTHORIZED", "USED", s.now())
	if err != nil {
		return err
	}
	if !won {
		return errorf(CodeUnauthorized, "this confirmation was already used")
	}
	return nil
}

// confirmedIfNeeded refuses the retry of challenge c when need says the
// action needs a confirmation now and c's step-up (used by completeRetry
// just before) was never made: the first call did not need one. The
// person starts again, and the new first call is held.
func (s *Service) confirmedIfNeeded(ctx context.Context, tx store.Tx, c *store.Challenge, need func() (*stepUpNeed, error)) error {
	n, err := need()
	if err != nil || n == nil {
		return err
	}
	u, err := tx.StepUpOf(ctx, c.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeScaNotCompleted,
			Message: "this now needs your confirmation (" + actionNames[n.action] + "), which it did not when it was started: send it again from the start"}
	case err != nil:
		return err
	case u.Status != "USED" || u.Action != n.action:
		return errorf(CodeScaNotCompleted, "this needs your confirmation ("+actionNames[n.action]+"): send it again from the start")
	}
	return nil
}

// decimalAmount writes amount (smallest units) in major units with the
// currency's decimals: 15000, 2 → "150.00". Exact (integer arithmetic).
func decimalAmount(amount int64, decimals int) string {
	neg := amount < 0
	digits := strconv.FormatUint(uint64(amount), 10)
	if neg {
		digits = strconv.FormatUint(uint64(-amount), 10) // -MinInt64 wraps to its own magnitude
	}
	if decimals > 0 {
		if len(digits) <= decimals {
			digits = strings.Repeat("0", decimals-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg {
		digits = "-" + digits
	}
	return digits
}

// ---- payments

// AuthorizeQuote is POST /quotes/{quoteId}/authorize: the proof of a held
// payment's step-up. A good proof executes the payment in the same
// transaction (the hold, PROCESSING) and answers the quote.
func (s *Service) AuthorizeQuote(ctx context.Context, id string, req wire.ScaAuthorization, user EndUser) (wire.Quote, error) {
	auth := &req
	var q *store.Quote
	var x *store.Transaction
	return authorizeIn(ctx, s, s.sourceOf(ctx, id), func(tx store.Tx) (*store.StepUp, error) {
		var err error
		if q, x, err = loadQuote(ctx, tx, id); err != nil {
			return nil, err
		}
		return heldStepUp(ctx, tx, q, x, s.now())
	}, auth, user, func(tx store.Tx, u *store.StepUp) (wire.Quote, error) {
		wallet, _, err := executableAccounts(ctx, tx, q, "quoteId", false)
		if err != nil {
			return wire.Quote{}, err
		}
		// The limits again: the day's other payments may have used them
		// while this one waited.
		if err := s.checkLimits(ctx, tx, q.SourceAccountID, q.DestinationAccountID, q.TotalSendingAmount); err != nil {
			return wire.Quote{}, err
		}
		now := s.now()
		won, err := tx.AdvanceStepUp(ctx, u.ID, "AUTHORIZED", "USED", now)
		if err != nil {
			return wire.Quote{}, err
		}
		if !won {
			return wire.Quote{}, errorf(CodeConflict, "this confirmation was already used")
		}
		return s.runPayment(ctx, tx, q, x, wallet, now)
	})
}

// heldStepUp is the pending step-up of the quote q, refused unless the
// quote waits for it.
func heldStepUp(ctx context.Context, tx store.Tx, q *store.Quote, x *store.Transaction, now time.Time) (*store.StepUp, error) {
	if st := quoteStatus(q, x, now); st != "PENDING_AUTHORIZATION" {
		msg := "the quote is " + st + ": it has no confirmation to give"
		if st == "EXPIRED" && x.Status == "PENDING_AUTHORIZATION" {
			msg = "the quote expired at " + timestamp(q.ExpiresAt) + " before it was confirmed; ask for a new quote"
		}
		return nil, &Error{Code: "INVALID_STATE_TRANSITION", Message: msg, Details: map[string]any{"quoteStatus": st}}
	}
	return tx.StepUpOf(ctx, q.ID)
}

// ResendQuoteCode is POST /quotes/{quoteId}/authorize/resend: a new code
// for a payment held for an e-mailed code.
func (s *Service) ResendQuoteCode(ctx context.Context, id string) error {
	return s.resendCode(ctx, func(tx store.Tx) (*store.StepUp, error) {
		q, x, err := loadQuote(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		return heldStepUp(ctx, tx, q, x, s.now())
	})
}

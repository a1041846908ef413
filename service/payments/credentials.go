package payments

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// AccountQuery is the query of the lists of an account's credentials and
// sessions.
type AccountQuery struct {
	AccountID string `query:"accountId"`
}

// ListCredentials is the account's credentials (GET
// /auth/credentials?accountId=). An unknown account gives an empty list,
// not 404 (facts §3.3).
func (s *Service) ListCredentials(ctx context.Context, q AccountQuery) (wire.Data[wire.AuthMethod], error) {
	accountID := q.AccountID
	if err := checkAccountID(accountID); err != nil {
		return wire.Data[wire.AuthMethod]{}, err
	}
	return read(ctx, s, func(tx store.Tx) (wire.Data[wire.AuthMethod], error) {
		creds, err := tx.ListCredentials(ctx, accountID)
		if err != nil {
			return wire.Data[wire.AuthMethod]{}, err
		}
		out := wire.Data[wire.AuthMethod]{Data: make([]wire.AuthMethod, 0, len(creds))}
		for i := range creds {
			out.Data = append(out.Data, authMethodJSON(&creds[i]))
		}
		return out, nil
	})
}

// notFor flags a member that the body's credential type does not take.
func notFor(fe *fieldErrors, typ, field string, present bool) {
	if present {
		fe.add(field, "not allowed for "+typ+" credentials")
	}
}

// checkAccountID refuses an accountId that is missing or not an internal
// account's id.
func checkAccountID(id string) error {
	switch {
	case id == "":
		return invalidField("accountId", "required")
	case !ids.Valid("InternalAccount", id):
		return invalidField("accountId", "must be an InternalAccount:<uuid> id")
	}
	return nil
}

func authMethodJSON(c *store.Credential) wire.AuthMethod {
	return wire.AuthMethod{
		ID:           c.ID,
		AccountID:    c.AccountID,
		Type:         c.Type,
		Nickname:     c.Nickname,
		CreatedAt:    timestamp(c.CreatedAt),
		UpdatedAt:    timestamp(c.UpdatedAt),
		CredentialID: c.CredentialID,
	}
}

// loadCredential reads the credential named in the path or answers 404.
func loadCredential(ctx context.Context, tx store.Tx, id string) (*store.Credential, error) {
	notFound := errorf(CodeNotFound, "no credential with this id")
	if !ids.Valid("AuthMethod", id) {
		return nil, notFound
	}
	c, err := tx.GetCredential(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	return c, err
}

// lockedError is the 429 answered while a credential is locked.
func lockedError(until, now time.Time) *Error {
	return rateLimited(ReasonCredentialLocked, "too many wrong codes; this credential is locked until Retry-After seconds have passed",
		int(math.Ceil(until.Sub(now).Seconds())))
}

// CredentialChallenge is the answer of ChallengeCredential: exactly one of
// its members is set, the EMAIL_OTP credential with the
// otpEncryptionTargetBundle of its fresh code, or a PASSKEY credential's
// login challenge.
type CredentialChallenge struct {
	AuthMethod *wire.AuthMethod
	Passkey    *wire.PasskeyAuthChallenge
}

// MarshalJSON is the answer: the member that is set (the passkey's
// challenge when both are).
func (c CredentialChallenge) MarshalJSON() ([]byte, error) {
	if c.Passkey != nil {
		return encodeJSON(c.Passkey)
	}
	return encodeJSON(c.AuthMethod)
}

// ChallengeCredential starts a sign-in with a credential (POST
// /auth/credentials/{id}/challenge, body {clientPublicKey} for PASSKEY,
// none or {} otherwise). EMAIL_OTP gets a fresh code by e-mail and the
// signed target bundle to seal it to; PASSKEY gets a WebAuthn challenge
// bound to clientPublicKey (challengePasskey); OAUTH does not use this
// endpoint.
func (s *Service) ChallengeCredential(ctx context.Context, id string, req wire.ChallengeRequest) (CredentialChallenge, error) {
	typ, err := read(ctx, s, func(tx store.Tx) (string, error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return "", err
		}
		return cred.Type, nil
	})
	if err != nil {
		return CredentialChallenge{}, err
	}
	switch typ {
	case wire.TypePasskey:
		c, err := s.challengePasskey(ctx, id, &req)
		if err != nil {
			return CredentialChallenge{}, err
		}
		return CredentialChallenge{Passkey: c}, nil
	case wire.TypeOAuth:
		return CredentialChallenge{}, errorf(CodeInvalidInput, "OAUTH credentials have no challenge: verify with a fresh oidcToken")
	}

	got, err := commit(ctx, s, "", nil, func(tx store.Tx) (issuedCode, error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return issuedCode{}, err
		}
		now := s.now()
		if cred.LockedUntil.After(now) {
			return issuedCode{}, lockedError(cred.LockedUntil, now)
		}
		last, err := tx.LatestOTP(ctx, cred.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return issuedCode{}, err
		case s.cfg.OTPResendInterval > 0 && last.UsedAt.IsZero() && now.Before(last.CreatedAt.Add(s.cfg.OTPResendInterval)):
			// (A used code, or one withdrawn because it could not be
			// e-mailed, does not hold the next one back.)
			return issuedCode{}, rateLimited(ReasonCodeRecentlySent, "a code was sent moments ago; check the inbox, or ask for another after Retry-After seconds",
				int(math.Ceil(last.CreatedAt.Add(s.cfg.OTPResendInterval).Sub(now).Seconds())))
		}
		otp, err := s.issueOTP(ctx, tx, cred)
		return issuedCode{cred: cred, otp: otp}, err
	})
	if err != nil {
		return CredentialChallenge{}, err
	}
	out, err := s.deliverOTP(ctx, got, func(ctx context.Context) { s.withdrawOTP(ctx, got.otp) })
	if err != nil {
		return CredentialChallenge{}, err
	}
	return CredentialChallenge{AuthMethod: &out}, nil
}

// issuedOTP is a code that was stored and must now be e-mailed, with the
// target bundle the client seals it to.
type issuedOTP struct {
	id, code, bundle string
}

// issuedCode is what a transaction that issued a code commits: the
// credential the code is for, and the code (nil when none was issued).
type issuedCode struct {
	cred *store.Credential
	otp  *issuedOTP
}

// deliverOTP ends an operation whose committed transaction issued a code:
// it e-mails the code and answers the credential with the code's
// otpEncryptionTargetBundle. When the e-mail fails, undo (withdrawOTP,
// undoCredential) takes back what the transaction did, after and outside
// it, and the answer is mailOTP's 503.
func (s *Service) deliverOTP(ctx context.Context, got issuedCode, undo func(context.Context)) (wire.AuthMethod, error) {
	// The code is committed: whether it is sent (or taken back) must not
	// depend on when the client goes away, or a disconnect would undo a
	// credential whose e-mail was already on its way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mailTimeout)
	defer cancel()
	if err := s.mailOTP(ctx, got.cred, got.otp.code); err != nil {
		undo(ctx)
		return wire.AuthMethod{}, err
	}
	out := authMethodJSON(got.cred)
	out.OTPEncryptionTargetBundle = got.otp.bundle
	return out, nil
}

// withdrawOTP marks a code that could not be e-mailed as used, after its
// transaction committed: nobody can have it, and the person who asks again
// at once (as the 503 tells them) is not held back by the resend interval.
// If even that fails, the code expires unused and the interval applies.
func (s *Service) withdrawOTP(ctx context.Context, otp *issuedOTP) {
	ctx = context.WithoutCancel(ctx) // the request may be gone; the clean-up must not be
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.UseOTP(ctx, otp.id, s.now())
		return err
	})
	if err != nil {
		s.log.ErrorContext(ctx, "unsent OTP not withdrawn", "otp", otp.id, "err", err)
	}
}

// issueOTP makes a fresh target key pair and 6-digit code for an EMAIL_OTP
// credential and stores them (superseding any earlier code). The target
// key is kept sealed at rest, bound to the issuance id.
func (s *Service) issueOTP(ctx context.Context, tx store.Tx, cred *store.Credential) (*issuedOTP, error) {
	target, err := walletcrypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	defer target.Wipe()
	code, err := otpCode()
	if err != nil {
		return nil, err
	}
	bundle, err := walletcrypto.NewTargetBundle(s.signer, target.PublicKey())
	if err != nil {
		return nil, err
	}
	now := s.now()
	otp := store.OTP{
		ID:           ids.New("Otp"),
		CredentialID: cred.ID,
		CreatedAt:    now,
		ExpiresAt:    now.Add(s.cfg.OTPTTL),
	}
	scalar := target.Bytes()
	otp.TargetPrivateKey = s.box.Seal(scalar, otpKeyLabel(otp.ID))
	clear(scalar)
	otp.CodeHash = s.codeMAC(otp.ID, cred.ID, code)
	if err := tx.CreateOTP(ctx, &otp); err != nil {
		return nil, err
	}
	return &issuedOTP{id: otp.ID, code: code, bundle: bundle}, nil
}

func otpKeyLabel(otpID string) string { return otpID + "/otp-target-key" }

// mailTimeout bounds sending a code and taking it back when sending failed.
const mailTimeout = 30 * time.Second

// mailOTP sends the code. A failure is 503: the code exists but the person
// never got it, so they should ask again.
func (s *Service) mailOTP(ctx context.Context, cred *store.Credential, code string) error {
	msg := mail.Message{
		From:    s.cfg.MailFrom,
		To:      cred.Nickname,
		Subject: "Your wallet sign-in code",
		Text: "Your sign-in code is " + code + "\n\n" +
			"It is valid for " + minutes(s.cfg.OTPTTL) + ". If you did not try to sign in, ignore this e-mail;\n" +
			"nobody can sign in without the code.\n",
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "OTP e-mail not sent", "credential", cred.ID, "err", err)
		return errorf(CodeServiceUnavailable, "the sign-in code could not be e-mailed; try again shortly")
	}
	return nil
}

func minutes(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	if m == 1 {
		return "1 minute"
	}
	return strconv.Itoa(m) + " minutes"
}

// otpCode draws a uniform 6-digit code.
func otpCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	s := n.String()
	return strings.Repeat("0", 6-len(s)) + s, nil
}

// otpMACInfo is the HKDF info that derives the OTP code key from the
// at-rest key; a new construction needs a new version.
const otpMACInfo = "paywallet/otp-code-mac/v1"

// otpMACKey derives the key of [Service.codeMAC] from the at-rest key with
// HKDF-SHA-256. It is a key of its own, distinct from the sealing key, and
// it lives only in memory: the database never holds it.
func otpMACKey(atRestKey []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, atRestKey, nil, otpMACInfo, 32)
}

// codeMAC is what the otps table keeps of a code: HMAC-SHA-256 under a key
// derived from the at-rest key, of the issuance id, the credential id and
// the code. A 6-digit code has only 10^6 values, so an unkeyed hash would
// give the code to anyone who reads the row while it is live (every value
// tried in a fraction of a second); without the at-rest key, which is not in
// the database, the row tells nothing. The ids bind the value to its row and
// credential: copied into another row it matches no code.
//
// Rows written before this construction (an unkeyed SHA-256 of the
// issuance id and the code) are not accepted: their code fails as a wrong
// one (and counts towards the lock-out), and the person asks for a new
// code. Such rows live minutes (OTPTTL), so only a sign-in in flight during
// the upgrade is affected. Accepting the old form too, even only for old
// rows, would let anyone who can write the otps table (but does not hold
// the at-rest key) make a code of their choosing valid for any credential.
func (s *Service) codeMAC(otpID, credentialID, code string) []byte {
	m := hmac.New(sha256.New, s.otpMACKey)
	m.Write([]byte(otpID + "\x00" + credentialID + "\x00" + code))
	return m.Sum(nil)
}

// VerifyCredential completes a sign-in with a credential and issues a
// session (POST /auth/credentials/{id}/verify, a body of the credential's
// type). EMAIL_OTP takes two legs: the sealed code answers a challenge
// (startOTPLogin), and the same body signed by the key sealed with the
// code gives the session (completeOTPLogin). PASSKEY (verifyPasskey) and
// OAUTH (verifyOAuth) give it in one call.
//
// call carries the headers as they came: the body is checked first, and
// only EMAIL_OTP is a signed retry, so only EMAIL_OTP refuses one of its
// headers without the other (SignedCall.Check); PASSKEY reads only the Request-Id
// of its challenge, OAUTH neither.
//
// Each sign-in is a SIGNED_IN record of the customer's security log (with
// the "new sign-in" e-mail on a device the log has not seen), each refused
// code or passkey a SIGN_IN_FAILED one.
func (s *Service) VerifyCredential(ctx context.Context, id string, req wire.VerifyRequest, call SignedCall, user EndUser) (Signed[wire.Session], error) {
	out, err := s.verifyCredential(ctx, id, req, call, user)
	s.metrics.signIn(req.Type, out.Challenge, err)
	return out, err
}

// verifyCredential is VerifyCredential without the sign-in counter.
func (s *Service) verifyCredential(ctx context.Context, id string, req wire.VerifyRequest, call SignedCall, user EndUser) (Signed[wire.Session], error) {
	var fe fieldErrors
	switch req.Type {
	case "":
		fe.add("type", "required")
	case wire.TypeEmailOTP:
		if req.EncryptedOTPBundle == "" {
			fe.add("encryptedOtpBundle", "required")
		}
		notFor(&fe, req.Type, "oidcToken", req.OIDCToken != "")
		notFor(&fe, req.Type, "clientPublicKey", req.ClientPublicKey != "")
		notFor(&fe, req.Type, "assertion", req.Assertion != nil)
	case wire.TypeOAuth:
		if req.OIDCToken == "" {
			fe.add("oidcToken", "required")
		}
		if req.ClientPublicKey == "" {
			fe.add("clientPublicKey", "required")
		}
		notFor(&fe, req.Type, "encryptedOtpBundle", req.EncryptedOTPBundle != "")
		notFor(&fe, req.Type, "assertion", req.Assertion != nil)
	case wire.TypePasskey:
		checkAssertionFields(req.Assertion, &fe, "assertion")
		notFor(&fe, req.Type, "encryptedOtpBundle", req.EncryptedOTPBundle != "")
		notFor(&fe, req.Type, "oidcToken", req.OIDCToken != "")
		notFor(&fe, req.Type, "clientPublicKey", req.ClientPublicKey != "")
	default:
		fe.addConstraint("type", "must be EMAIL_OTP, PASSKEY or OAUTH", wire.FieldConstraint{Enum: []string{wire.TypeEmailOTP, wire.TypePasskey, wire.TypeOAuth}})
	}
	var sealed walletcrypto.Bundle
	if req.EncryptedOTPBundle != "" {
		var err error
		sealed, err = walletcrypto.ParseBundle(req.EncryptedOTPBundle)
		if err != nil {
			fe.add("encryptedOtpBundle", `must be a JSON string {"encappedPublic":"<130 hex>","ciphertext":"<hex>"}`)
		}
	}
	if e := fe.err(); e != nil {
		return Signed[wire.Session]{}, e
	}
	switch req.Type {
	case wire.TypePasskey:
		return s.verifyPasskey(ctx, id, req.Assertion, call.RequestID, user)
	case wire.TypeOAuth:
		return s.verifyOAuth(ctx, id, &req, user)
	}
	if err := call.Check(); err != nil {
		return Signed[wire.Session]{}, err
	}
	if call.IsRetry() {
		return s.completeOTPLogin(ctx, id, call, user)
	}
	return s.startOTPLogin(ctx, id, sealed, call.BodyHash, user)
}

// otpAttempt is what leg 1 of an EMAIL_OTP verification commits: the
// challenge of a right code, or the refusal of a wrong one, whose counting
// towards the lock-out must commit although the request is refused.
type otpAttempt struct {
	challenge *store.Challenge
	refusal   error
}

// startOTPLogin is leg 1 of EMAIL_OTP verification: open the bundle with the
// current code's target key, check the code in constant time, and answer a
// challenge whose payload is a verification token bound to the sealed key.
// Wrong codes count towards the lock-out even though the request is refused.
func (s *Service) startOTPLogin(ctx context.Context, id string, sealed walletcrypto.Bundle, bodyHash []byte, user EndUser) (Signed[wire.Session], error) {
	// A refusal that rolls the transaction back is recorded after it:
	// the account and the reason of the last attempt.
	var failedAccount, reason string
	got, err := commit(ctx, s, "", nil, func(tx store.Tx) (otpAttempt, error) {
		failedAccount = ""
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return otpAttempt{}, err
		}
		fail := func(why string, err error) (otpAttempt, error) {
			failedAccount, reason = cred.AccountID, why
			return otpAttempt{}, err
		}
		// record is a failure counted in this transaction, which commits.
		record := func(typ string, details map[string]any, u *EndUser) error {
			return s.recordSecurity(ctx, tx, securityRecord{accountID: cred.AccountID, typ: typ, details: details, user: u})
		}
		if cred.Type != wire.TypeEmailOTP {
			return otpAttempt{}, invalidField("type", "this credential is "+cred.Type+", not EMAIL_OTP")
		}
		now := s.now()
		if cred.LockedUntil.After(now) {
			return fail(SignInFailureLocked, lockedError(cred.LockedUntil, now))
		}
		otp, err := tx.LatestOTP(ctx, cred.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fail(SignInFailureNoCode, errorf(CodeUnauthorized, "no code was issued; request one with the challenge endpoint"))
		}
		if err != nil {
			return otpAttempt{}, err
		}
		if !otp.UsedAt.IsZero() {
			return fail(SignInFailureUsedCode, errorf(CodeUnauthorized, "this code was already used or replaced; request a new one"))
		}
		if !now.Before(otp.ExpiresAt) {
			return fail(SignInFailureExpiredCode, errorf(CodeUnauthorized, "the code has expired; request a new one"))
		}
		scalar, err := s.box.Open(otp.TargetPrivateKey, otpKeyLabel(otp.ID))
		if err != nil {
			return otpAttempt{}, err
		}
		targetKey, err := walletcrypto.NewPrivateKey(scalar)
		clear(scalar)
		if err != nil {
			return otpAttempt{}, err
		}
		plaintext, err := walletcrypto.Open(targetKey, sealed.EncappedPublic, sealed.Ciphertext)
		targetKey.Wipe()
		if err != nil {
			return fail(SignInFailureBadBundle, errorf(CodeUnauthorized, "encryptedOtpBundle was not sealed to the current code's target key"))
		}
		code, clientKey, err := walletcrypto.ParseOTPPlaintext(plaintext)
		if err != nil {
			return otpAttempt{}, errorf(CodeUnauthorized, "the sealed OTP payload is malformed")
		}
		if subtle.ConstantTimeCompare(s.codeMAC(otp.ID, cred.ID, code), otp.CodeHash) != 1 {
			failures := cred.FailedAttempts + 1
			if err := record(SecuritySignInFailed, map[string]any{"method": wire.TypeEmailOTP, "reason": SignInFailureWrongCode}, &user); err != nil {
				return otpAttempt{}, err
			}
			if failures >= s.cfg.MaxOTPFailures {
				until := now.Add(s.cfg.LockoutDuration)
				if err := tx.SetCredentialLock(ctx, cred.ID, 0, until, now); err != nil {
					return otpAttempt{}, err
				}
				if _, err := tx.UseOTP(ctx, otp.ID, now); err != nil {
					return otpAttempt{}, err
				}
				if err := record(SecurityLockedOut, map[string]any{"until": timestamp(until), "failedAttempts": failures,
					"action": "SIGN_IN"}, nil); err != nil {
					return otpAttempt{}, err
				}
				return otpAttempt{refusal: lockedError(until, now)}, nil
			}
			if err := tx.SetCredentialLock(ctx, cred.ID, failures, time.Time{}, now); err != nil {
				return otpAttempt{}, err
			}
			return otpAttempt{refusal: errorf(CodeUnauthorized, "wrong code")}, nil
		}
		won, err := tx.UseOTP(ctx, otp.ID, now)
		if err != nil {
			return otpAttempt{}, err
		}
		if !won {
			return fail(SignInFailureUsedCode, errorf(CodeUnauthorized, "this code was already used"))
		}
		if cred.FailedAttempts != 0 {
			if err := tx.SetCredentialLock(ctx, cred.ID, 0, time.Time{}, now); err != nil {
				return otpAttempt{}, err
			}
		}
		expires := now.Add(s.cfg.ChallengeTTL)
		token, err := s.verificationToken(otp.ID, cred.Nickname, clientKey, now, expires)
		if err != nil {
			return otpAttempt{}, err
		}
		op := operation{name: opVerifyCredential, targetID: cred.ID, accountID: cred.AccountID, bodyHash: bodyHash}
		ch, err := s.issueChallenge(ctx, tx, op, token, clientKey)
		return otpAttempt{challenge: ch}, err
	})
	if err != nil {
		if failedAccount != "" && refusedBy(err) != nil {
			s.recordSecurityAlone(ctx, securityRecord{accountID: failedAccount, typ: SecuritySignInFailed,
				details: map[string]any{"method": wire.TypeEmailOTP, "reason": reason}, user: &user})
		}
		return Signed[wire.Session]{}, err
	}
	if got.refusal != nil {
		return Signed[wire.Session]{}, got.refusal
	}
	return challenged[wire.Session](challengeJSON(wire.TypeEmailOTP, got.challenge)), nil
}

const opVerifyCredential = "auth.credentials.verify"

// completeOTPLogin is leg 2: the same body, stamped by the key sealed in the
// bundle, with the Request-Id of leg 1. The sealed key becomes the session
// API key; no encryptedSessionSigningKey is returned.
func (s *Service) completeOTPLogin(ctx context.Context, id string, call SignedCall, user EndUser) (Signed[wire.Session], error) {
	var notice *securityNotice
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (Signed[wire.Session], error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		op := operation{name: opVerifyCredential, targetID: cred.ID, accountID: cred.AccountID, bodyHash: call.BodyHash}
		ch, err := s.completeRetry(ctx, tx, op, call, nil)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		// The bound key is stored compressed: it becomes the session key.
		sess, _, err := s.startSession(ctx, tx, cred, ch.PublicKey)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if notice, err = s.recordSignIn(ctx, tx, cred, sess, user); err != nil {
			return Signed[wire.Session]{}, err
		}
		return done(issuedSession(sess, "")), nil
	})
	if err == nil {
		s.send(ctx, notice)
	}
	return out, err
}

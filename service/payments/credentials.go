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
	"net/http"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// listCredentials handles GET /auth/credentials?accountId=. An unknown
// account gives an empty list, not 404 (facts §3.3).
func (s *Service) listCredentials(w http.ResponseWriter, r *http.Request) error {
	accountID, err := accountIDParam(r)
	if err != nil {
		return err
	}
	var creds []store.Credential
	err = s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		creds, err = tx.ListCredentials(r.Context(), accountID)
		return err
	})
	if err != nil {
		return err
	}
	out := wire.Data[wire.AuthMethod]{Data: make([]wire.AuthMethod, 0, len(creds))}
	for i := range creds {
		out.Data = append(out.Data, authMethodJSON(&creds[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// notFor flags a member that the body's credential type does not take.
func notFor(fe *fieldErrors, typ, field string, present bool) {
	if present {
		fe.add(field, "not allowed for "+typ+" credentials")
	}
}

// accountIDParam reads the required accountId query parameter.
func accountIDParam(r *http.Request) (string, error) {
	id := r.URL.Query().Get("accountId")
	return id, checkAccountID(id)
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

// challengeCredential handles POST /auth/credentials/{id}/challenge.
// EMAIL_OTP gets a fresh code by e-mail and the signed target bundle to
// seal it to; PASSKEY gets a WebAuthn challenge bound to clientPublicKey
// (passkeys.go); OAUTH does not use this endpoint.
func (s *Service) challengeCredential(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req wire.ChallengeRequest
	if err := decodeJSON(r, body, &req, true); err != nil {
		return err
	}
	var typ string
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		cred, err := loadCredential(ctx, tx, r.PathValue("id"))
		if err == nil {
			typ = cred.Type
		}
		return err
	})
	if err != nil {
		return err
	}
	switch typ {
	case wire.TypePasskey:
		return s.challengePasskey(w, r, &req)
	case wire.TypeOAuth:
		return errorf(CodeInvalidInput, "OAUTH credentials have no challenge: verify with a fresh oidcToken")
	}

	var cred *store.Credential
	var otp *issuedOTP
	err = s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		if cred, err = loadCredential(ctx, tx, r.PathValue("id")); err != nil {
			return err
		}
		now := s.now()
		if cred.LockedUntil.After(now) {
			return lockedError(cred.LockedUntil, now)
		}
		last, err := tx.LatestOTP(ctx, cred.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		case s.cfg.OTPResendInterval > 0 && last.UsedAt.IsZero() && now.Before(last.CreatedAt.Add(s.cfg.OTPResendInterval)):
			// (A used code, or one withdrawn because it could not be
			// e-mailed, does not hold the next one back.)
			return rateLimited(ReasonCodeRecentlySent, "a code was sent moments ago; check the inbox, or ask for another after Retry-After seconds",
				int(math.Ceil(last.CreatedAt.Add(s.cfg.OTPResendInterval).Sub(now).Seconds())))
		}
		otp, err = s.issueOTP(ctx, tx, cred)
		return err
	})
	if err != nil {
		return err
	}
	if err := s.mailOTP(ctx, cred, otp.code); err != nil {
		s.withdrawOTP(ctx, otp)
		return err
	}
	out := authMethodJSON(cred)
	out.OTPEncryptionTargetBundle = otp.bundle
	writeJSON(w, http.StatusOK, out)
	return nil
}

// issuedOTP is a code that was stored and must now be e-mailed, with the
// target bundle the client seals it to.
type issuedOTP struct {
	id, code, bundle string
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
		s.log.Error("unsent OTP not withdrawn", "otp", otp.id, "err", err)
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
		s.log.Error("OTP e-mail not sent", "credential", cred.ID, "err", err)
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

// verifyCredential handles POST /auth/credentials/{id}/verify.
func (s *Service) verifyCredential(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req wire.VerifyRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
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
		checkAssertionFields(req.Assertion, &fe)
		notFor(&fe, req.Type, "encryptedOtpBundle", req.EncryptedOTPBundle != "")
		notFor(&fe, req.Type, "oidcToken", req.OIDCToken != "")
		notFor(&fe, req.Type, "clientPublicKey", req.ClientPublicKey != "")
	default:
		fe.addConstraint("type", "must be EMAIL_OTP, PASSKEY or OAUTH", wire.FieldConstraint{Enum: []string{wire.TypeEmailOTP, wire.TypePasskey, wire.TypeOAuth}})
	}
	var sealed walletcrypto.Bundle
	if req.EncryptedOTPBundle != "" {
		sealed, err = walletcrypto.ParseBundle(req.EncryptedOTPBundle)
		if err != nil {
			fe.add("encryptedOtpBundle", `must be a JSON string {"encappedPublic":"<130 hex>","ciphertext":"<hex>"}`)
		}
	}
	if e := fe.err(); e != nil {
		return e
	}
	switch req.Type {
	case wire.TypePasskey:
		return s.verifyPasskey(w, r, req.Assertion)
	case wire.TypeOAuth:
		return s.verifyOAuth(w, r, &req)
	}
	hdr, isRetry, herr := readRetryHeaders(r)
	if herr != nil {
		return herr
	}
	bodyHash, err := CanonicalBodyHash(body)
	if err != nil {
		return err
	}
	if isRetry {
		return s.completeOTPLogin(w, r, hdr, bodyHash)
	}
	return s.startOTPLogin(w, r, sealed, bodyHash)
}

// startOTPLogin is leg 1 of EMAIL_OTP verification: open the bundle with the
// current code's target key, check the code in constant time, and answer a
// challenge whose payload is a verification token bound to the sealed key.
// Wrong codes count towards the lock-out even though the request is refused.
func (s *Service) startOTPLogin(w http.ResponseWriter, r *http.Request, sealed walletcrypto.Bundle, bodyHash []byte) error {
	ctx := r.Context()
	var answer error
	var ch *store.Challenge
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		answer, ch = nil, nil
		cred, err := loadCredential(ctx, tx, r.PathValue("id"))
		if err != nil {
			return err
		}
		if cred.Type != wire.TypeEmailOTP {
			return invalidField("type", "this credential is "+cred.Type+", not EMAIL_OTP")
		}
		now := s.now()
		if cred.LockedUntil.After(now) {
			return lockedError(cred.LockedUntil, now)
		}
		otp, err := tx.LatestOTP(ctx, cred.ID)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(CodeUnauthorized, "no code was issued; request one with the challenge endpoint")
		}
		if err != nil {
			return err
		}
		if !otp.UsedAt.IsZero() {
			return errorf(CodeUnauthorized, "this code was already used or replaced; request a new one")
		}
		if !now.Before(otp.ExpiresAt) {
			return errorf(CodeUnauthorized, "the code has expired; request a new one")
		}
		scalar, err := s.box.Open(otp.TargetPrivateKey, otpKeyLabel(otp.ID))
		if err != nil {
			return err
		}
		targetKey, err := walletcrypto.NewPrivateKey(scalar)
		clear(scalar)
		if err != nil {
			return err
		}
		plaintext, err := walletcrypto.Open(targetKey, sealed.EncappedPublic, sealed.Ciphertext)
		targetKey.Wipe()
		if err != nil {
			return errorf(CodeUnauthorized, "encryptedOtpBundle was not sealed to the current code's target key")
		}
		code, clientKey, err := walletcrypto.ParseOTPPlaintext(plaintext)
		if err != nil {
			return errorf(CodeUnauthorized, "the sealed OTP payload is malformed")
		}
		if subtle.ConstantTimeCompare(s.codeMAC(otp.ID, cred.ID, code), otp.CodeHash) != 1 {
			failures := cred.FailedAttempts + 1
			if failures >= s.cfg.MaxOTPFailures {
				until := now.Add(s.cfg.LockoutDuration)
				if err := tx.SetCredentialLock(ctx, cred.ID, 0, until, now); err != nil {
					return err
				}
				if _, err := tx.UseOTP(ctx, otp.ID, now); err != nil {
					return err
				}
				answer = lockedError(until, now)
				return nil
			}
			if err := tx.SetCredentialLock(ctx, cred.ID, failures, time.Time{}, now); err != nil {
				return err
			}
			answer = errorf(CodeUnauthorized, "wrong code")
			return nil
		}
		won, err := tx.UseOTP(ctx, otp.ID, now)
		if err != nil {
			return err
		}
		if !won {
			return errorf(CodeUnauthorized, "this code was already used")
		}
		if cred.FailedAttempts != 0 {
			if err := tx.SetCredentialLock(ctx, cred.ID, 0, time.Time{}, now); err != nil {
				return err
			}
		}
		expires := now.Add(s.cfg.ChallengeTTL)
		token, err := s.verificationToken(otp.ID, cred.Nickname, clientKey, now, expires)
		if err != nil {
			return err
		}
		op := operation{name: opVerifyCredential, targetID: cred.ID, accountID: cred.AccountID, bodyHash: bodyHash}
		ch, err = s.issueChallenge(ctx, tx, op, token, clientKey)
		return err
	})
	if err != nil {
		return err
	}
	if answer != nil {
		return answer
	}
	writeJSON(w, http.StatusAccepted, challengeJSON(wire.TypeEmailOTP, ch))
	return nil
}

const opVerifyCredential = "auth.credentials.verify"

// completeOTPLogin is leg 2: the same body, stamped by the key sealed in the
// bundle, with the Request-Id of leg 1. The sealed key becomes the session
// API key; no encryptedSessionSigningKey is returned.
func (s *Service) completeOTPLogin(w http.ResponseWriter, r *http.Request, hdr retryHeaders, bodyHash []byte) error {
	ctx := r.Context()
	var sess *store.Session
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		cred, err := loadCredential(ctx, tx, r.PathValue("id"))
		if err != nil {
			return err
		}
		op := operation{name: opVerifyCredential, targetID: cred.ID, accountID: cred.AccountID, bodyHash: bodyHash}
		ch, err := s.completeRetry(ctx, tx, op, hdr, nil)
		if err != nil {
			return err
		}
		// The bound key is stored compressed: it becomes the session key.
		sess, _, err = s.startSession(ctx, tx, cred, ch.PublicKey)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, issuedSession(sess, ""))
	return nil
}

// legacyCredentialRoutes are this area's handlers that are not yet operations (see
// LegacyRoutes).
func (s *Service) legacyCredentialRoutes() map[string]LegacyHandler {
	return map[string]LegacyHandler{
		"GET /auth/credentials":                 s.listCredentials,
		"POST /auth/credentials":                s.createCredential,
		"DELETE /auth/credentials/{id}":         s.deleteCredential,
		"POST /auth/credentials/{id}/challenge": s.challengeCredential,
		"POST /auth/credentials/{id}/verify":    s.verifyCredential,
	}
}

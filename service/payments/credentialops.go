package payments

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/oidc"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Signed-retry and login operations on credentials (grid-api-facts §3.3).
const (
	opCreateCredential = "auth.credentials.create"
	opDeleteCredential = "auth.credentials.delete"
	opPasskeyLogin     = "auth.credentials.passkey-login"
)

// CreateCredential adds a credential to an account (POST
// /auth/credentials). Adding a credential to an account that has one is a
// signed retry: the first call checks everything the retry will need (the
// passkey attestation, the OIDC token, the duplicate rules) and answers the
// challenge; the retry, signed by an active session of the account, stores
// the credential and answers it. For EMAIL_OTP the retry also issues the
// first code, e-mails it after the commit and returns its
// otpEncryptionTargetBundle. An account with no credential at all gets its
// first one directly, as there is nothing to sign with.
//
// The new credential is a SIGN_IN_METHOD_ADDED record of the customer's
// security log, and the customer is e-mailed ("sign-in methods changed")
// before any code is.
func (s *Service) CreateCredential(ctx context.Context, req wire.CredentialCreateRequest, call SignedCall, user EndUser) (Signed[wire.AuthMethod], error) {
	if err := checkCreateCredential(&req); err != nil {
		return Signed[wire.AuthMethod]{}, err
	}
	var token *oidc.Token
	if req.Type == wire.TypeOAuth {
		var err error
		if token, err = s.verifyOIDCToken(ctx, req.OIDCToken, "oidcToken"); err != nil {
			return Signed[wire.AuthMethod]{}, err
		}
		if err := s.fresh(token); err != nil {
			return Signed[wire.AuthMethod]{}, err
		}
	}

	type created struct {
		challenge *store.Challenge
		sca       *wire.ScaChallenge
		issuedCode
		notice *securityNotice
	}
	got, err := commit(ctx, s, "", nil, func(tx store.Tx) (created, error) {
		acct, err := s.walletAccount(ctx, tx, req.AccountID)
		if err != nil {
			return created{}, err
		}
		if acct.CustomerID == "" {
			return created{}, invalidField("accountId", "is a platform internal account; credentials sign in to a customer's EMBEDDED_WALLET account")
		}
		existing, err := tx.ListCredentials(ctx, acct.ID)
		if err != nil {
			return created{}, err
		}
		cred, err := s.newCredential(ctx, tx, &req, acct, existing, token)
		if err != nil {
			return created{}, err
		}
		op := operation{name: opCreateCredential, targetID: acct.ID, accountID: acct.ID, bodyHash: call.BodyHash}
		if len(existing) > 0 && !call.IsRetry() {
			payload, err := s.activity(acct.ID, createActivityType(req.Type), createActivityParams(&req, acct.ID, cred))
			if err != nil {
				return created{}, err
			}
			c, err := s.issueChallenge(ctx, tx, op, payload, nil)
			if err != nil {
				return created{}, err
			}
			// Adding a sign-in method may need the person's
			// confirmation (stepup.go).
			need, err := s.actionNeed(ctx, tx, ActionSignInMethodAdd, acct.ID)
			if err != nil || need == nil {
				return created{challenge: c}, err
			}
			st, err := s.newStepUp(ctx, tx, need, c.ID, payload, c.ExpiresAt, false)
			if err != nil {
				return created{}, err
			}
			return created{challenge: c, sca: st.challenge}, nil
		}
		if len(existing) > 0 {
			if _, err := s.completeRetry(ctx, tx, op, call, s.activeKeyOf(ctx, tx, acct.ID)); err != nil {
				return created{}, err
			}
		}
		if req.Type == wire.TypePasskey {
			won, err := tx.UseRegistrationChallenge(ctx, registrationChallengeHash(req.Challenge), s.now())
			if err != nil {
				return created{}, err
			}
			if !won {
				return created{}, invalidField("challenge", "this registration challenge was already used; start the registration again")
			}
		}
		if err := tx.CreateCredential(ctx, cred); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return created{}, duplicateCredential(cred.Type)
			}
			return created{}, err
		}
		notice, err := s.recordMethodAdded(ctx, tx, acct, cred, user)
		if err != nil {
			return created{}, err
		}
		var otp *issuedOTP
		if cred.Type == wire.TypeEmailOTP {
			otp, err = s.issueOTP(ctx, tx, cred)
		}
		return created{issuedCode: issuedCode{cred: cred, otp: otp}, notice: notice}, err
	})
	if err == nil {
		// Before the code: the code stays the newest e-mail of the inbox.
		s.send(ctx, got.notice)
	}
	switch {
	case err != nil:
		return Signed[wire.AuthMethod]{}, err
	case got.challenge != nil:
		c := challengeJSON(req.Type, got.challenge)
		c.ScaChallenge = got.sca
		return challenged[wire.AuthMethod](c), nil
	case got.otp == nil:
		return done(authMethodJSON(got.cred)), nil
	}
	out, err := s.deliverOTP(ctx, got.issuedCode, func(ctx context.Context) { s.undoCredential(ctx, got.cred) })
	if err != nil {
		return Signed[wire.AuthMethod]{}, err
	}
	return done(out), nil
}

// checkCreateCredential names every bad field of a create body; only the
// fields of the body's type may be present.
func checkCreateCredential(req *wire.CredentialCreateRequest) error {
	var fe fieldErrors
	if req.AccountID == "" {
		fe.add("accountId", "required")
	} else if !ids.Valid("InternalAccount", req.AccountID) {
		fe.add("accountId", "must be an InternalAccount:<uuid> id")
	}
	extra := func(field string, present bool) { notFor(&fe, req.Type, field, present) }
	switch req.Type {
	case "":
		fe.add("type", "required")
	case wire.TypeEmailOTP:
		extra("oidcToken", req.OIDCToken != "")
		extra("nickname", req.Nickname != "")
		extra("challenge", req.Challenge != "")
		extra("attestation", req.Attestation != nil)
	case wire.TypeOAuth:
		if req.OIDCToken == "" {
			fe.add("oidcToken", "required")
		}
		extra("nickname", req.Nickname != "")
		extra("challenge", req.Challenge != "")
		extra("attestation", req.Attestation != nil)
	case wire.TypePasskey:
		extra("oidcToken", req.OIDCToken != "")
		checkAttestationFields(req, &fe)
	default:
		fe.addConstraint("type", "must be EMAIL_OTP, OAUTH or PASSKEY",
			wire.FieldConstraint{Enum: []string{wire.TypeEmailOTP, wire.TypeOAuth, wire.TypePasskey}})
	}
	if e := fe.err(); e != nil {
		return e
	}
	return nil
}

// internalAccount loads an internal account by id, whatever its status, or
// answers 404.
func internalAccount(ctx context.Context, tx store.Tx, id string) (*store.InternalAccount, error) {
	notFound := errorf(CodeNotFound, "no internal account with this id")
	if !ids.Valid("InternalAccount", id) {
		return nil, notFound
	}
	a, err := tx.GetInternalAccount(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound
	}
	return a, err
}

// walletAccount loads an internal account that may still be used by id, or
// answers 404 (410 for a CLOSED one).
func (s *Service) walletAccount(ctx context.Context, tx store.Tx, id string) (*store.InternalAccount, error) {
	a, err := internalAccount(ctx, tx, id)
	if err == nil && a.Status == "CLOSED" {
		// The account of a deleted customer (DeleteCustomer): no
		// credential, session or wallet operation may use it again.
		return nil, &Error{Code: CodeCustomerDeleted, Message: "the account is CLOSED: its customer was deleted",
			Details: map[string]any{"accountId": a.ID, "customerId": a.CustomerID}}
	}
	return a, err
}

// newCredential builds the credential a create body asks for and applies
// the uniqueness rules with their reference codes, on both legs.
func (s *Service) newCredential(ctx context.Context, tx store.Tx, req *wire.CredentialCreateRequest,
	acct *store.InternalAccount, existing []store.Credential, token *oidc.Token) (*store.Credential, error) {
	now := s.now()
	c := &store.Credential{ID: ids.New("AuthMethod"), AccountID: acct.ID, Type: req.Type, CreatedAt: now, UpdatedAt: now}
	switch req.Type {
	case wire.TypeEmailOTP:
		for i := range existing {
			if existing[i].Type == wire.TypeEmailOTP {
				return nil, errorf("EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS", "this account already has an EMAIL_OTP credential")
			}
		}
		if acct.CustomerID == "" {
			return nil, invalidField("accountId", "a platform account has no customer e-mail to send codes to")
		}
		cust, err := tx.GetCustomer(ctx, acct.CustomerID)
		if err != nil {
			return nil, err
		}
		if cust.Email == "" {
			return nil, invalidField("accountId", "the account's customer has no e-mail; set one with PATCH /customers/{id} first")
		}
		c.Nickname = cust.Email
	case wire.TypeOAuth:
		for i := range existing {
			if existing[i].Type == wire.TypeOAuth && existing[i].OIDCIssuer == token.Issuer && existing[i].OIDCSubject == token.Subject {
				return nil, errorf(CodeInvalidInput, "this identity is already an OAUTH credential of the account")
			}
		}
		c.Nickname = token.Email
		if c.Nickname == "" {
			c.Nickname = token.Subject
		}
		c.OIDCIssuer, c.OIDCSubject = token.Issuer, token.Subject
		c.OIDCAudience = s.audienceFor(token)
	case wire.TypePasskey:
		handle, _ := wire.WebAuthnUserHandle(acct.ID)
		rec, err := s.verifyAttestation(req, handle)
		if err != nil {
			return nil, err
		}
		c.Nickname = strings.TrimSpace(req.Nickname)
		c.CredentialID = req.Attestation.CredentialID
		c.SignCount = int64(rec.Authenticator.SignCount)
		if c.Passkey, err = passkeyRecord(rec); err != nil {
			return nil, err
		}
		if _, err := tx.GetPasskey(ctx, c.CredentialID); err == nil {
			return nil, duplicateCredential(wire.TypePasskey)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return c, nil
}

func duplicateCredential(typ string) error {
	switch typ {
	case wire.TypePasskey:
		return errorf("PASSKEY_CREDENTIAL_ALREADY_EXISTS", "this passkey is already registered")
	case wire.TypeEmailOTP:
		return errorf("EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS", "this account already has an EMAIL_OTP credential, or the e-mail signs in to another wallet")
	}
	return errorf(CodeInvalidInput, "this identity is already an OAUTH credential of the account")
}

// createActivityType and createActivityParams are the payloadToSign of a
// credential creation (grid-api-facts §4.5).
func createActivityType(typ string) string {
	switch typ {
	case wire.TypeEmailOTP:
		return "ACTIVITY_TYPE_UPDATE_USER_EMAIL"
	case wire.TypeOAuth:
		return "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS"
	}
	return "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2"
}

func createActivityParams(req *wire.CredentialCreateRequest, accountID string, c *store.Credential) map[string]any {
	switch req.Type {
	case wire.TypeEmailOTP:
		return map[string]any{"userEmail": c.Nickname, "userId": accountID}
	case wire.TypeOAuth:
		return map[string]any{"oauthProviders": []any{map[string]any{"oidcToken": req.OIDCToken, "providerName": c.OIDCIssuer}}, "userId": accountID}
	}
	a := req.Attestation
	return map[string]any{
		"authenticators": []any{map[string]any{
			"attestation": map[string]any{
				"attestationObject": a.AttestationObject,
				"clientDataJson":    a.ClientDataJSON,
				"credentialId":      a.CredentialID,
			},
			"authenticatorName": c.Nickname,
			"challenge":         req.Challenge,
			"transports":        append([]string{}, a.Transports...),
		}},
		"userId": accountID,
	}
}

// DeleteCredential removes a credential (DELETE /auth/credentials/{id}, no
// body): the first call answers a challenge, then a retry signed by an
// active session of another credential of the account (a credential cannot
// vouch for its own removal) removes it. The credential's sessions go with
// it. The account's last credential cannot be removed. The removal is a
// SIGN_IN_METHOD_REMOVED record of the customer's security log, with the
// "sign-in methods changed" e-mail.
func (s *Service) DeleteCredential(ctx context.Context, id string, call SignedCall, user EndUser) (Signed[struct{}], error) {
	var notice *securityNotice
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (Signed[struct{}], error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return Signed[struct{}]{}, err
		}
		all, err := tx.ListCredentials(ctx, cred.AccountID)
		if err != nil {
			return Signed[struct{}]{}, err
		}
		if len(all) <= 1 {
			return Signed[struct{}]{}, errorf(CodeInvalidInput, "this is the account's last credential; add another before removing it")
		}
		op := operation{name: opDeleteCredential, targetID: cred.ID, accountID: cred.AccountID, bodyHash: call.BodyHash}
		if !call.IsRetry() {
			if op.stepUp, err = s.actionNeed(ctx, tx, ActionSignInMethodRemove, cred.AccountID); err != nil {
				return Signed[struct{}]{}, err
			}
			c, err := s.activityChallenge(ctx, tx, op, cred.Type, "ACTIVITY_TYPE_DELETE_AUTHENTICATORS",
				map[string]any{"authenticatorIds": []string{cred.ID}, "userId": cred.AccountID}, nil)
			return challenged[struct{}](c), err
		}
		if _, err := s.completeRetry(ctx, tx, op, call, s.activeKeyExcept(ctx, tx, cred.AccountID, cred.ID)); err != nil {
			return Signed[struct{}]{}, err
		}
		// The credential's sessions go with it: each active one is a
		// session the person ended.
		active, err := tx.ListActiveSessions(ctx, cred.AccountID, s.now())
		if err != nil {
			return Signed[struct{}]{}, err
		}
		if err := tx.DeleteCredential(ctx, cred.ID); err != nil {
			return Signed[struct{}]{}, err
		}
		if notice, err = s.recordMethodRemoved(ctx, tx, cred, &user, true); err != nil {
			return Signed[struct{}]{}, err
		}
		for i := range active {
			if active[i].CredentialID != cred.ID {
				continue
			}
			if err := s.recordSecurity(ctx, tx, securityRecord{accountID: cred.AccountID, typ: SecuritySessionRevoked,
				details: map[string]any{"sessionId": active[i].ID, "by": RevokedByYou}, user: &user}); err != nil {
				return Signed[struct{}]{}, err
			}
		}
		return done(struct{}{}), nil
	})
	if err == nil {
		s.send(ctx, notice)
	}
	return out, err
}

// recordMethodAdded records a credential added to acct, and makes the
// "sign-in methods changed" e-mail.
func (s *Service) recordMethodAdded(ctx context.Context, tx store.Tx, acct *store.InternalAccount, cred *store.Credential, user EndUser) (*securityNotice, error) {
	if acct.CustomerID == "" {
		return nil, nil
	}
	details := map[string]any{"method": cred.Type, "credentialId": cred.ID}
	if cred.Type == wire.TypePasskey && cred.Nickname != "" {
		details["nickname"] = cred.Nickname
	}
	if err := s.recordSecurity(ctx, tx, securityRecord{customerID: acct.CustomerID, accountID: acct.ID,
		typ: SecuritySignInMethodAdded, details: details, user: &user}); err != nil {
		return nil, err
	}
	return s.newNotice(ctx, tx, acct.CustomerID, "", noticeMethodsChanged,
		"A sign-in method was added to your wallet: "+methodWords(cred.Type)+" at "+s.now().UTC().Format("2 Jan 2006 15:04 UTC")+".")
}

// recordMethodRemoved records a credential removed; mailed, it also makes
// the "sign-in methods changed" e-mail.
func (s *Service) recordMethodRemoved(ctx context.Context, tx store.Tx, cred *store.Credential, user *EndUser, mailed bool) (*securityNotice, error) {
	acct, err := tx.GetInternalAccount(ctx, cred.AccountID)
	if err != nil || acct.CustomerID == "" {
		return nil, err
	}
	if err := s.recordSecurity(ctx, tx, securityRecord{customerID: acct.CustomerID, accountID: acct.ID,
		typ: SecuritySignInMethodRemoved, details: map[string]any{"method": cred.Type, "credentialId": cred.ID}, user: user}); err != nil {
		return nil, err
	}
	if !mailed {
		return nil, nil
	}
	return s.newNotice(ctx, tx, acct.CustomerID, "", noticeMethodsChanged,
		"A sign-in method was removed from your wallet: "+methodWords(cred.Type)+" at "+s.now().UTC().Format("2 Jan 2006 15:04 UTC")+".")
}

// challengePasskey is the PASSKEY branch of ChallengeCredential: it binds
// clientPublicKey to a canonical session-creation body and answers its
// digest as the WebAuthn challenge.
func (s *Service) challengePasskey(ctx context.Context, id string, req *wire.ChallengeRequest) (*wire.PasskeyAuthChallenge, error) {
	if req.ClientPublicKey == "" {
		return nil, invalidField("clientPublicKey", "required for PASSKEY credentials")
	}
	if _, err := walletcrypto.ParseClientPublicKey(req.ClientPublicKey); err != nil {
		return nil, invalidField("clientPublicKey", clientKeyRule)
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (*wire.PasskeyAuthChallenge, error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		now := s.now()
		last, err := tx.LatestChallenge(ctx, opPasskeyLogin, cred.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		case s.cfg.PasskeyChallengeInterval > 0 && now.Before(last.CreatedAt.Add(s.cfg.PasskeyChallengeInterval)):
			return nil, rateLimited(ReasonChallengeRecentlyIssued, "a challenge was issued moments ago; ask for another after Retry-After seconds",
				int(math.Ceil(last.CreatedAt.Add(s.cfg.PasskeyChallengeInterval).Sub(now).Seconds())))
		}
		// The nonce makes every challenge unpredictable and distinct, even
		// two asked for in the same millisecond with the same key.
		nonce := make([]byte, 16)
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		payload, err := s.activity(cred.AccountID, "ACTIVITY_TYPE_STAMP_LOGIN", map[string]any{
			"authenticatorId":   cred.ID,
			"expirationSeconds": strconv.Itoa(int(s.cfg.SessionTTL / time.Second)),
			"nonce":             hex.EncodeToString(nonce),
			"publicKey":         strings.ToLower(req.ClientPublicKey),
		})
		if err != nil {
			return nil, err
		}
		digest := sha256.Sum256([]byte(payload))
		ch := &store.Challenge{
			ID:        ids.New("Request"),
			Operation: opPasskeyLogin,
			TargetID:  cred.ID,
			AccountID: cred.AccountID,
			BodyHash:  digest[:],
			Payload:   payload,
			PublicKey: sec1Of(req.ClientPublicKey),
			CreatedAt: now,
			ExpiresAt: now.Add(s.cfg.ChallengeTTL),
		}
		if err := tx.CreateChallenge(ctx, ch); err != nil {
			return nil, err
		}
		return &wire.PasskeyAuthChallenge{
			AuthMethod: authMethodJSON(cred),
			Challenge:  hex.EncodeToString(ch.BodyHash),
			RequestID:  ch.ID,
			ExpiresAt:  timestamp(ch.ExpiresAt),
		}, nil
	})
}

// verifyPasskey is the PASSKEY branch of VerifyCredential: it completes a
// passkey login with the Request-Id of the challenge, an assertion over its
// challenge by this credential's authenticator, and a session bound to the
// key the challenge carried. The challenge is consumed in the same
// transaction that advances the sign counter and creates the session.
//
// A refused assertion (or challenge) is a SIGN_IN_FAILED record, written
// after the transaction rolled back.
func (s *Service) verifyPasskey(ctx context.Context, id string, a *wire.PasskeyAssertion, requestID string, user EndUser) (Signed[wire.Session], error) {
	if requestID == "" {
		return Signed[wire.Session]{}, errorf(CodeRequestIDMissing, "a PASSKEY verification needs the Request-Id of its challenge")
	}
	var notice *securityNotice
	var passkeyAccount string // set once the credential is known to be a passkey
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (Signed[wire.Session], error) {
		passkeyAccount = ""
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if cred.Type != wire.TypePasskey {
			return Signed[wire.Session]{}, invalidField("type", "this credential is "+cred.Type+", not PASSKEY")
		}
		passkeyAccount = cred.AccountID
		ch, err := s.pendingChallenge(ctx, tx, requestID, opPasskeyLogin, cred.ID)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if a.CredentialID != cred.CredentialID {
			return Signed[wire.Session]{}, errorf(CodeUnauthorized, "the assertion was made with another passkey than this credential")
		}
		if !(s.mode == ModeSandbox && a.Signature == sandboxPasskeySignature) {
			all, err := tx.ListCredentials(ctx, cred.AccountID)
			if err != nil {
				return Signed[wire.Session]{}, err
			}
			user, err := passkeyUserOf(cred.AccountID, all)
			if err != nil {
				return Signed[wire.Session]{}, err
			}
			rec, err := s.verifyAssertion(a, []byte(hex.EncodeToString(ch.BodyHash)), user, cred.CredentialID)
			if err != nil {
				return Signed[wire.Session]{}, err
			}
			record, err := passkeyRecord(rec)
			if err != nil {
				return Signed[wire.Session]{}, err
			}
			if err := tx.UpdatePasskey(ctx, cred.ID, record, int64(rec.Authenticator.SignCount), s.now()); err != nil {
				return Signed[wire.Session]{}, err
			}
		}
		won, err := tx.ConsumeChallenge(ctx, ch.ID, s.now())
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if !won {
			return Signed[wire.Session]{}, errorf(CodeUnauthorized, "this Request-Id was already used")
		}
		sess, sealed, err := s.startSession(ctx, tx, cred, ch.PublicKey)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if notice, err = s.recordSignIn(ctx, tx, cred, sess, user); err != nil {
			return Signed[wire.Session]{}, err
		}
		return done(issuedSession(sess, sealed)), nil
	})
	if err != nil {
		if e := refusedBy(err); e != nil && passkeyAccount != "" {
			s.recordSecurityAlone(ctx, securityRecord{accountID: passkeyAccount, typ: SecuritySignInFailed,
				details: map[string]any{"method": wire.TypePasskey, "reason": SignInFailurePasskey}, user: &user})
		}
		return out, err
	}
	s.send(ctx, notice)
	return out, nil
}

// verifyOAuth is the OAUTH branch of VerifyCredential: it completes an
// OAuth login in one call. The token must verify against a trusted issuer,
// name this credential's identity, be at most 60 seconds old and carry
// nonce = hex SHA-256 of the clientPublicKey text.
func (s *Service) verifyOAuth(ctx context.Context, id string, req *wire.VerifyRequest, user EndUser) (Signed[wire.Session], error) {
	if _, err := walletcrypto.ParseClientPublicKey(req.ClientPublicKey); err != nil {
		return Signed[wire.Session]{}, invalidField("clientPublicKey", clientKeyRule)
	}
	token, err := s.verifyOIDCToken(ctx, req.OIDCToken, "oidcToken")
	if err != nil {
		return Signed[wire.Session]{}, err
	}
	if err := s.fresh(token); err != nil {
		return Signed[wire.Session]{}, err
	}
	nonce := sha256.Sum256([]byte(req.ClientPublicKey))
	if token.Nonce != hex.EncodeToString(nonce[:]) {
		return Signed[wire.Session]{}, errorf(CodeUnauthorized, "the token's nonce is not the SHA-256 of clientPublicKey")
	}
	var notice *securityNotice
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (Signed[wire.Session], error) {
		cred, err := loadCredential(ctx, tx, id)
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if cred.Type != wire.TypeOAuth {
			return Signed[wire.Session]{}, invalidField("type", "this credential is "+cred.Type+", not OAUTH")
		}
		if token.Issuer != cred.OIDCIssuer || token.Subject != cred.OIDCSubject || !slices.Contains(token.Audience, cred.OIDCAudience) {
			return Signed[wire.Session]{}, errorf(CodeUnauthorized, "the token is for another identity than this credential")
		}
		sess, sealed, err := s.startSession(ctx, tx, cred, sec1Of(req.ClientPublicKey))
		if err != nil {
			return Signed[wire.Session]{}, err
		}
		if notice, err = s.recordSignIn(ctx, tx, cred, sess, user); err != nil {
			return Signed[wire.Session]{}, err
		}
		return done(issuedSession(sess, sealed)), nil
	})
	if err == nil {
		s.send(ctx, notice)
	}
	return out, err
}

// clientKeyRule says what a clientPublicKey must be.
const clientKeyRule = "must match ^04[0-9a-fA-F]{128}$ or ^0[23][0-9a-fA-F]{64}$ and be a P-256 point"

// sec1Of is a validated clientPublicKey as bytes, in the encoding it was
// sent in: 33 bytes (compressed) or 65 (uncompressed), which selects the
// session-key flow (see sessionKey).
func sec1Of(clientPublicKeyHex string) []byte {
	b, _ := hex.DecodeString(clientPublicKeyHex)
	return b
}

// startSession creates a session of cred. clientKey is the SEC1 key the
// client sent: compressed (33 bytes) makes it the session key (client-held,
// nothing returned); uncompressed (65 bytes) makes the service create a
// session key and seal it to clientKey, returned once as
// encryptedSessionSigningKey. In sandbox mode that value is a stub of the
// same shape that cannot be decrypted (spec, Authentication §4).
func (s *Service) startSession(ctx context.Context, tx store.Tx, cred *store.Credential, clientKey []byte) (*store.Session, string, error) {
	key, sealed, err := s.sessionKey(clientKey)
	if err != nil {
		return nil, "", err
	}
	now := s.now()
	sess := &store.Session{
		ID:           ids.New("Session"),
		AccountID:    cred.AccountID,
		CredentialID: cred.ID,
		Type:         cred.Type,
		Nickname:     cred.Nickname,
		PublicKey:    key.Compressed(),
		CreatedAt:    now,
		UpdatedAt:    now,
		ExpiresAt:    now.Add(s.cfg.SessionTTL),
	}
	if err := tx.CreateSession(ctx, sess); err != nil {
		return nil, "", err
	}
	return sess, sealed, nil
}

// sessionKey decides the session's API key from the client's key (see
// startSession) and returns the sealed session key where one is delivered.
func (s *Service) sessionKey(clientKey []byte) (*walletcrypto.PublicKey, string, error) {
	client, err := walletcrypto.ParsePublicKey(clientKey)
	if err != nil {
		return nil, "", err
	}
	if len(clientKey) != 65 {
		return client, "", nil
	}
	made, err := walletcrypto.GenerateKey()
	if err != nil {
		return nil, "", err
	}
	defer made.Wipe()
	if s.mode == ModeSandbox {
		return made.PublicKey(), sandboxSessionKeyStub(made.PublicKey()), nil
	}
	sealed, err := walletcrypto.SealSessionKey(client, made)
	if err != nil {
		return nil, "", err
	}
	return made.PublicKey(), sealed, nil
}

// sandboxSessionKeyStub is random bytes shaped like a sealed session key:
// base58check of a 33-byte compressed point and 48 bytes (a 32-byte
// ciphertext and its tag). Nobody can open it, the service included.
func sandboxSessionKeyStub(point *walletcrypto.PublicKey) string {
	payload := make([]byte, 33+48)
	copy(payload, point.Compressed())
	_, _ = rand.Read(payload[33:])
	return walletcrypto.Base58CheckEncode(payload)
}

// undoCredential removes an EMAIL_OTP credential, with its code, whose
// code could not be e-mailed after its transaction committed: the request
// answers 503 ("try again"), and a retry must find nothing in its way. If
// the removal fails too, the credential stays and the person can ask it for
// a code (POST /auth/credentials/{id}/challenge).
func (s *Service) undoCredential(ctx context.Context, cred *store.Credential) {
	ctx = context.WithoutCancel(ctx) // the request may be gone; the clean-up must not be
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		if err := tx.DeleteCredential(ctx, cred.ID); err != nil {
			return err
		}
		// Its SIGN_IN_METHOD_ADDED record is in the log: so is its removal.
		_, err := s.recordMethodRemoved(ctx, tx, cred, nil, false)
		return err
	})
	if err != nil {
		s.log.ErrorContext(ctx, "credential whose code was not e-mailed not removed", "credential", cred.ID, "err", err)
	}
}

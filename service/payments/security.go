package payments

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"

	"paywallet/service/ids"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// # The security log
//
// Every security event of a customer is a record of its security log
// (store.SecurityTx): appended in the transaction of the operation it
// tells of (recordSecurity), or, for a refusal whose transaction rolls
// back, in a transaction of its own after it (recordSecurityAlone). The
// records are hash-chained per customer (service/seclog); `paymentsd
// ledger verify` recomputes the chains. The person reads the log in the
// wallet (GET /customers/{customerId}/security-events); the wallet makes
// a sentence of each type, given below with its details' members.

// Types of security events.
const (
	// SecuritySignedIn: "Signed in with a passkey on Chrome on Android".
	// Details {method EMAIL_OTP|PASSKEY|OAUTH, device, network, sessionId}.
	SecuritySignedIn = "SIGNED_IN"
	// SecuritySignInFailed: "A sign-in with an e-mail code failed (wrong
	// code) on Firefox on Linux". Details {method, reason, device,
	// network}; reason is one of the SignInFailure… values.
	SecuritySignInFailed = "SIGN_IN_FAILED"
	// SecurityLockedOut: "Sign-in locked until 12:15 after 5 failed
	// attempts". Details {until, failedAttempts, action}.
	SecurityLockedOut = "LOCKED_OUT"
	// SecuritySessionRevoked: "A session was signed out by you".
	// Details {sessionId, by: YOU|PLATFORM|EMAIL_LINK}.
	SecuritySessionRevoked = "SESSION_REVOKED"
	// SecuritySignInMethodAdded: "A passkey “Work laptop” was added".
	// Details {method, credentialId, nickname?}.
	SecuritySignInMethodAdded = "SIGN_IN_METHOD_ADDED"
	// SecuritySignInMethodRemoved: "A passkey was removed". Details
	// {method, credentialId}.
	SecuritySignInMethodRemoved = "SIGN_IN_METHOD_REMOVED"
	// SecurityEmailChanged: "Your e-mail changed from a***@example.com
	// to b***@example.com". Details {from?, to}, masked (maskEmail): the
	// log cannot be edited later, so it keeps no full address.
	SecurityEmailChanged = "EMAIL_CHANGED"
	// SecurityRecoveryPhraseExported: "Your recovery phrase was
	// exported". Details {}.
	SecurityRecoveryPhraseExported = "RECOVERY_PHRASE_EXPORTED"
	// SecurityStepUpPassed: "You confirmed a payment with your passkey".
	// Details {action, factor, challengeId}.
	SecurityStepUpPassed = "STEP_UP_PASSED"
	// SecurityStepUpFailed: "A confirmation of a payment failed".
	// Details {action, factor, reason}.
	SecurityStepUpFailed = "STEP_UP_FAILED"
	// SecurityLimitsChanged: "Your daily limit changed from 500.00 USD to
	// 1,000.00 USD, from 13 May 12:00". Details {before, after,
	// effectiveAt}.
	SecurityLimitsChanged = "LIMITS_CHANGED"
)

// SecurityEventTypes are the types above, in the order of the list.
var SecurityEventTypes = []string{SecuritySignedIn, SecuritySignInFailed, SecurityLockedOut, SecuritySessionRevoked,
	SecuritySignInMethodAdded, SecuritySignInMethodRemoved, SecurityEmailChanged, SecurityRecoveryPhraseExported,
	SecurityStepUpPassed, SecurityStepUpFailed, SecurityLimitsChanged}

// Reasons of a SIGN_IN_FAILED record.
const (
	SignInFailureWrongCode   = "WRONG_CODE"   // the code did not match
	SignInFailureExpiredCode = "EXPIRED_CODE" // the code's time was over
	SignInFailureUsedCode    = "USED_CODE"    // the code was used or replaced
	SignInFailureNoCode      = "NO_CODE"      // no code was ever asked for
	SignInFailureBadBundle   = "BAD_BUNDLE"   // the code was sealed to another key (an old code's)
	SignInFailureLocked      = "LOCKED"       // the credential is locked after failed attempts
	SignInFailurePasskey     = "PASSKEY_REFUSED"
)

// Who revoked a session (SESSION_REVOKED's by).
const (
	RevokedByYou       = "YOU"
	RevokedByPlatform  = "PLATFORM"
	RevokedByEmailLink = "EMAIL_LINK"
)

// EndUser is the person's device and IP address as the BFF tells them
// (wire.HeaderEndUserIP, wire.HeaderEndUserDevice): an operation that
// records a security event takes it, and the HTTP layer reads it from
// the headers. Nothing is decided by it: it is only written in the log.
// The zero EndUser is an unknown one.
type EndUser struct {
	IP, Device string
}

// Bounds of what an EndUser keeps: a longer IP is no IP; a device label
// is cut.
const (
	maxEndUserIP     = 64
	maxEndUserDevice = 120
)

// NewEndUser is the EndUser of the header values ip and device: the IP
// only if it parses, the device label without control characters,
// trimmed and at most maxEndUserDevice characters.
func NewEndUser(ip, device string) EndUser {
	var u EndUser
	if ip = strings.TrimSpace(ip); len(ip) <= maxEndUserIP {
		if a, err := netip.ParseAddr(ip); err == nil {
			u.IP = a.String()
		}
	}
	device = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return -1
		}
		return r
	}, device)
	device = strings.Join(strings.Fields(device), " ")
	if r := []rune(device); len(r) > maxEndUserDevice {
		device = strings.TrimSpace(string(r[:maxEndUserDevice]))
	}
	u.Device = device
	return u
}

// Network is the coarse place of the IP address, computed from the
// address alone (no look-up, no third-party service): "loopback" for this
// computer, "private" for a private or link-local network, else the
// address's /24 (IPv4) or /48 (IPv6) network; "" when the IP is unknown.
func (u EndUser) Network() string {
	a, err := netip.ParseAddr(u.IP)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate(), a.IsLinkLocalUnicast(), a.IsUnspecified():
		return "private"
	case a.Is4():
		p, _ := a.Prefix(24)
		return p.String()
	}
	p, _ := a.WithZone("").Prefix(48)
	return p.String()
}

// securityRecord is one event to record.
type securityRecord struct {
	// customerID is the customer whose log it joins; when empty, the
	// customer of accountID (an account without one records nothing).
	customerID string
	accountID  string // the wallet concerned; may be empty
	typ        string // a Security… type
	details    map[string]any
	// user, when set, adds the members device and network to details.
	user *EndUser
}

// recordSecurity appends ev to its customer's security log in tx, the
// transaction of the operation it tells of: the record exists exactly
// when the operation's effect does.
func (s *Service) recordSecurity(ctx context.Context, tx store.Tx, ev securityRecord) error {
	if ev.customerID == "" {
		if ev.accountID == "" {
			return errors.New("payments: a security record names neither a customer nor an account")
		}
		a, err := tx.GetInternalAccount(ctx, ev.accountID)
		if err != nil {
			return err
		}
		if a.CustomerID == "" {
			return nil
		}
		ev.customerID = a.CustomerID
	}
	details := make(map[string]any, len(ev.details)+2)
	for k, v := range ev.details {
		details[k] = v
	}
	if ev.user != nil {
		details["device"] = ev.user.Device
		details["network"] = ev.user.Network()
	}
	canon, err := canonicalJSON(details)
	if err != nil {
		return err
	}
	return tx.AppendSecurityEvent(ctx, &store.SecurityEvent{
		ID:         ids.New("SecurityEvent"),
		CustomerID: ev.customerID,
		AccountID:  ev.accountID,
		Type:       ev.typ,
		Details:    canon,
		CreatedAt:  s.now(),
	})
}

// recordSecurityAlone records ev in a transaction of its own: for a
// refusal (a wrong code, a refused passkey) whose operation's transaction
// rolled back. It runs after that transaction, even when the request is
// gone, and never changes the answer: a record it cannot write is logged.
func (s *Service) recordSecurityAlone(ctx context.Context, ev securityRecord) {
	ctx = context.WithoutCancel(ctx)
	if err := s.store.Tx(ctx, func(tx store.Tx) error { return s.recordSecurity(ctx, tx, ev) }); err != nil {
		s.log.ErrorContext(ctx, "security event not recorded", "type", ev.typ, "customer", ev.customerID, "account", ev.accountID, "err", err)
	}
}

// canonicalJSON is v as the log stores details: keys sorted (as
// encoding/json writes maps), no spaces, no HTML escaping.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// maskEmail keeps an address recognisable to its owner without keeping
// it: the first character of the local part and the domain.
func maskEmail(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" {
		return "***"
	}
	r := []rune(local)
	return string(r[0]) + "***@" + domain
}

// refusedBy is the *Error err is (nil for an internal failure): only a
// refusal of the person's attempt is a failed sign-in worth a record.
func refusedBy(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// ---- the security e-mails

// signOutLinkTTL is how long a security e-mail's sign-out link works.
const signOutLinkTTL = 7 * 24 * time.Hour

// securityNotice is a security e-mail made in an operation's transaction
// (with its sign-out link stored there) and sent after the commit.
type securityNotice struct {
	msg mail.Message
}

// Kinds of security e-mails.
const (
	noticeNewSignIn      = "new sign-in"
	noticeMethodsChanged = "sign-in methods changed"
	noticeLimitsChanged  = "limits changed"
)

// newNotice makes the e-mail of kind to the customer at to ("" : the
// customer's e-mail; none when it has none) telling what happened, with a
// link that signs every session of the customer out: the token is stored
// (hashed) in tx. Without a WalletURL the e-mail sends the person to the
// wallet's Security page instead, and no token is made.
func (s *Service) newNotice(ctx context.Context, tx store.Tx, customerID, to, kind, what string) (*securityNotice, error) {
	if to == "" {
		c, err := tx.GetCustomer(ctx, customerID)
		if err != nil {
			return nil, err
		}
		to = c.Email
	}
	if to == "" {
		return nil, nil
	}
	action := "If this was not you, open your wallet, go to Security and sign out everywhere, then change your sign-in methods."
	if s.cfg.WalletURL != "" {
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return nil, err
		}
		token := base64.RawURLEncoding.EncodeToString(raw[:])
		hash := sha256.Sum256([]byte(token))
		now := s.now()
		if err := tx.CreateSignOutLink(ctx, &store.SignOutLink{TokenHash: hash[:], CustomerID: customerID,
			CreatedAt: now, ExpiresAt: now.Add(signOutLinkTTL)}); err != nil {
			return nil, err
		}
		action = "If this was not you, sign out everywhere else with this link (valid for 7 days, once):\n\n" +
			strings.TrimRight(s.cfg.WalletURL, "/") + "/sign-out-everywhere#" + token + "\n\n" +
			"then change your sign-in methods in your wallet's Security page."
	}
	subject := "New sign-in to your wallet"
	switch kind {
	case noticeMethodsChanged:
		subject = "Your wallet's sign-in methods changed"
	case noticeLimitsChanged:
		subject = "Your wallet's limits changed"
	}
	return &securityNotice{msg: mail.Message{
		From:    s.cfg.MailFrom,
		To:      to,
		Subject: subject,
		Text:    what + "\n\n" + action + "\n\nIf it was you, there is nothing to do.\n",
	}}, nil
}

// send sends the notice after its operation committed; a failure is only
// logged: the operation happened, and the log has its record.
func (s *Service) send(ctx context.Context, n *securityNotice) {
	if n == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mailTimeout)
	defer cancel()
	if err := s.mailer.Send(ctx, n.msg); err != nil {
		s.log.ErrorContext(ctx, "security e-mail not sent", "subject", n.msg.Subject, "err", err)
	}
}

// validWalletURL says what is wrong with Config.WalletURL ("" : nothing;
// empty is allowed): the security e-mails' links must open the wallet.
func validWalletURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "must be an absolute http or https URL without query or fragment"
	}
	return ""
}

// methodWords names a sign-in method in an e-mail.
func methodWords(typ string) string {
	switch typ {
	case wire.TypePasskey:
		return "a passkey"
	case wire.TypeOAuth:
		return "a sign-in with another account (OAuth)"
	}
	return "e-mail codes"
}

// recordSignIn records a session's sign-in, and makes the "new sign-in"
// e-mail unless the customer's SIGNED_IN records had this device label
// from this network before: a label alone (browser and system, or
// whatever a client claims) is shared by too many devices to tell a
// stranger from the person.
func (s *Service) recordSignIn(ctx context.Context, tx store.Tx, cred *store.Credential, sess *store.Session, user EndUser) (*securityNotice, error) {
	acct, err := tx.GetInternalAccount(ctx, cred.AccountID)
	if err != nil || acct.CustomerID == "" {
		return nil, err
	}
	seen, err := s.deviceSeen(ctx, tx, acct.CustomerID, user.Device, user.Network())
	if err != nil {
		return nil, err
	}
	if err := s.recordSecurity(ctx, tx, securityRecord{customerID: acct.CustomerID, accountID: acct.ID, typ: SecuritySignedIn,
		details: map[string]any{"method": cred.Type, "sessionId": sess.ID}, user: &user}); err != nil {
		return nil, err
	}
	if seen {
		return nil, nil
	}
	device := user.Device
	if device == "" {
		device = "a device that did not say what it is"
	}
	where := ""
	if n := user.Network(); n != "" {
		where = " (network " + n + ")"
	}
	return s.newNotice(ctx, tx, acct.CustomerID, "", noticeNewSignIn,
		"Someone signed in to your wallet with "+methodWords(cred.Type)+" on "+device+where+" at "+
			s.now().UTC().Format("2 Jan 2006 15:04 UTC")+".")
}

// deviceSeen reports whether a SIGNED_IN record of the customer names the
// device label and the network.
func (s *Service) deviceSeen(ctx context.Context, tx store.Tx, customerID, device, network string) (bool, error) {
	cursor := ""
	for {
		p, err := tx.ListSecurityEvents(ctx, store.SecurityEventFilter{CustomerID: customerID, Type: SecuritySignedIn,
			Limit: 100, Cursor: cursor})
		if err != nil {
			return false, err
		}
		for i := range p.Items {
			var d struct {
				Device  *string `json:"device"`
				Network string  `json:"network"`
			}
			if json.Unmarshal(p.Items[i].Details, &d) == nil && d.Device != nil && *d.Device == device && d.Network == network {
				return true, nil
			}
		}
		if !p.HasMore {
			return false, nil
		}
		cursor = p.NextCursor
	}
}

// Package store defines what the payments service keeps between requests and
// the one interface that both SQL back ends (SQLite, PostgreSQL) implement.
//
// # Transactions
//
// Every state change a request makes happens inside one [Store.Tx] call: the
// function receives a [Tx] and either everything it wrote commits or nothing
// does. Reads outside a write use [Store.Tx] too; there is no separate read
// path, which keeps the two back ends identical in behaviour.
//
// # Compare-and-set
//
// Single-use things (OTP issuances, signed-retry challenges) are consumed with
// compare-and-set methods that report whether this caller won. Two requests
// racing to consume the same challenge see exactly one true.
//
// # Errors
//
// Implementations return [ErrNotFound] and [ErrConflict] (wrapped or bare, test
// with errors.Is); anything else is an internal failure.
//
// # Time
//
// Times are stored in UTC with microsecond precision (PostgreSQL's precision);
// callers should truncate to the microsecond before storing if they compare
// values read back. The zero time means "not set" for optional times.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound reports that the requested row does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict reports that a uniqueness rule refused the write.
var ErrConflict = errors.New("store: conflict")

// ErrUnavailable reports that the database could not be reached, or went
// away during the transaction (a primary that crashed, was demoted or cut
// off by a failover), so that the transaction did not take effect or its
// outcome is unknown (the connection broke during COMMIT). Nothing is half
// done either way: the caller answers "try again" (HTTP 503 with
// Retry-After), and a client that retries with its Idempotency-Key gets
// the first attempt's answer if that attempt did commit.
var ErrUnavailable = errors.New("store: database unavailable")

// ErrContention reports that a transaction kept losing races with
// concurrent ones (serialization failures, on PostgreSQL) until the store
// gave up running it again: too many requests changed the same rows at
// once. Nothing took effect; the caller answers "try again" (HTTP 503
// with Retry-After), as for ErrUnavailable, not a failure of its own.
var ErrContention = errors.New("store: too much contention")

// Store opens transactions. Implementations are safe for concurrent use.
type Store interface {
	// Tx runs fn in one database transaction. If fn returns an error the
	// transaction is rolled back and that error is returned unchanged.
	// Implementations may retry fn on serialization failures, so fn must not
	// have side effects outside the Tx.
	Tx(ctx context.Context, fn func(Tx) error) error
	// TxFor is Tx for work on one hot row, named by key (an internal
	// account id): it first waits until no other TxFor on the same key is
	// running, in any process using the database, and holds that turn
	// across its retries. Concurrent payments from one wallet then queue
	// instead of failing each other's serializable transactions over and
	// over. Where the database runs one writer at a time anyway (SQLite) it
	// is Tx.
	TxFor(ctx context.Context, key string, fn func(Tx) error) error
	LedgerSealer
	// Close releases the database.
	Close() error
}

// LazyStore is implemented by stores that can commit a transaction without
// waiting for it to reach the disk: such a commit may be lost if the machine
// (or, on PostgreSQL, the server) crashes right after it, but never half
// of it, and a later ordinary commit makes it durable too. It is for work
// that is safe to lose and do again: the webhook worker's claims and
// delivery outcomes (a lost outcome means the event is sent once more,
// which at-least-once delivery allows). On SQLite an fsync per worker
// round otherwise holds the one writer connection the API waits for.
//
// On PostgreSQL a lazy transaction also runs READ COMMITTED rather than
// SERIALIZABLE: its statements must guard themselves (compare-and-set on a
// lease, FOR UPDATE SKIP LOCKED), as the worker's do. Serializable, the
// worker's reads of pending events and the API's inserts of new ones were
// a read-write cycle that made PostgreSQL abort and rerun transactions on
// both sides, the API's included.
type LazyStore interface {
	Store
	// TxLazy is Tx with a commit that does not wait for durability.
	TxLazy(ctx context.Context, fn func(Tx) error) error
}

// Tx is everything the service can read and write within one transaction.
type Tx interface {
	ExternalAccountTx
	AgentTx
	MoneyTx
	LedgerTx
	WebhookTx
	APITokenTx
	StepUpTx
	// store.SecurityTx: the customers' security logs (security.go).
	SecurityTx
	SignOutLinkTx

	// An embedded wallet's personal limits (limits.go).
	LimitsTx

	// Settings hold service-wide values such as the target-bundle signer key.
	// PutSettingIfAbsent stores value under key unless the key exists, and
	// returns the value that is stored afterwards (the existing one if any),
	// so concurrent first starts of several instances agree on one value.
	PutSettingIfAbsent(ctx context.Context, key string, value []byte) ([]byte, error)
	GetSetting(ctx context.Context, key string) ([]byte, error)
	// ReplaceSetting stores value under key if the key holds exactly old,
	// and reports whether it did (false: the key is missing or holds
	// something else). It rewrites a setting in a new format without
	// overwriting what a concurrent start may have written.
	ReplaceSetting(ctx context.Context, key string, old, value []byte) (bool, error)

	// CreateCustomer fails with ErrConflict when PlatformCustomerID is taken.
	CreateCustomer(ctx context.Context, c *Customer) error
	GetCustomer(ctx context.Context, id string) (*Customer, error)
	// GetCustomerByUmaAddress is the live (not deleted) customer whose
	// UmaAddress is addr (the oldest when several share it); ErrNotFound
	// when none.
	GetCustomerByUmaAddress(ctx context.Context, addr string) (*Customer, error)
	// UpdateCustomer writes Email, FullName, UmaAddress and UpdatedAt of c,
	// and KYCStatus, KYBStatus, Profile and Identifier.
	UpdateCustomer(ctx context.Context, c *Customer) error
	// ListCustomers leaves deleted customers out unless f.IncludeDeleted.
	ListCustomers(ctx context.Context, f CustomerFilter) (Page[Customer], error)
	// DeleteCustomer sets DeletedAt (and UpdatedAt) to at if the customer
	// is not deleted yet, and reports whether this call did it. A deleted
	// customer's PlatformCustomerID is free for a new customer.
	DeleteCustomer(ctx context.Context, id string, at time.Time) (bool, error)
	// PaymentsInFlight counts the customer's transactions that the
	// settlement worker will still move money for: PROCESSING, or with a
	// next step due in any status but PENDING (a completed payment that
	// will come back, for instance). PENDING quotes are not counted.
	PaymentsInFlight(ctx context.Context, customerID string) (int, error)
	// SetInternalAccountStatus sets the account's status and UpdatedAt.
	SetInternalAccountStatus(ctx context.Context, id, status string, at time.Time) error

	CreateInternalAccount(ctx context.Context, a *InternalAccount) error
	GetInternalAccount(ctx context.Context, id string) (*InternalAccount, error)
	ListInternalAccounts(ctx context.Context, f InternalAccountFilter) (Page[InternalAccount], error)
	// SetPrivateEnabled sets the account's privateEnabled flag.
	SetPrivateEnabled(ctx context.Context, id string, enabled bool, now time.Time) error
	// SetWalletSecret stores the sealed wallet secret of an account that has
	// none and reports whether this call stored it (false: one was there).
	SetWalletSecret(ctx context.Context, id string, sealed []byte) (bool, error)

	// CreateCredential fails with ErrConflict when the account already has an
	// EMAIL_OTP credential and this is one too, or when another EMAIL_OTP
	// credential anywhere has the same Nickname (e-mail, compared in lower case).
	CreateCredential(ctx context.Context, c *Credential) error
	GetCredential(ctx context.Context, id string) (*Credential, error)
	// GetPasskey finds the PASSKEY credential with the WebAuthn credential
	// id (base64url rawId).
	GetPasskey(ctx context.Context, webauthnID string) (*Credential, error)
	// ListCredentials returns the account's credentials, oldest first.
	ListCredentials(ctx context.Context, accountID string) ([]Credential, error)
	// SetCredentialLock records failed verification attempts and an optional
	// lock-out end (zero time for none).
	SetCredentialLock(ctx context.Context, id string, failedAttempts int, lockedUntil time.Time, now time.Time) error
	// SetCredentialNickname renames a credential; for EMAIL_OTP the nickname
	// is the e-mail, so it fails with ErrConflict when another EMAIL_OTP
	// credential has it.
	SetCredentialNickname(ctx context.Context, id, nickname string, now time.Time) error
	// UpdatePasskey stores the WebAuthn record and the sign counter after a
	// successful assertion.
	UpdatePasskey(ctx context.Context, id string, record []byte, signCount int64, now time.Time) error
	// DeleteCredential removes the credential together with its OTP
	// issuances and every session it issued (active or not).
	DeleteCredential(ctx context.Context, id string) error
	// UseRegistrationChallenge records a WebAuthn registration challenge (by
	// its hash) and reports whether this call was the first to do so.
	UseRegistrationChallenge(ctx context.Context, hash []byte, at time.Time) (bool, error)

	// CreateOTP stores a new issuance and marks every earlier unused issuance
	// of the same credential as used at o.CreatedAt (a new code supersedes the old).
	CreateOTP(ctx context.Context, o *OTP) error
	// LatestOTP is the most recent issuance of the credential, used or not.
	LatestOTP(ctx context.Context, credentialID string) (*OTP, error)
	// UseOTP marks the issuance used at the given time if it is still unused
	// and reports whether this call did it.
	UseOTP(ctx context.Context, id string, at time.Time) (bool, error)

	CreateChallenge(ctx context.Context, c *Challenge) error
	GetChallenge(ctx context.Context, id string) (*Challenge, error)
	// LatestChallenge is the newest challenge of the operation on the
	// target, consumed or not (for re-challenge rate limits).
	LatestChallenge(ctx context.Context, operation, targetID string) (*Challenge, error)
	// ConsumeChallenge marks the challenge consumed at the given time if it is
	// unconsumed and reports whether this call did it.
	ConsumeChallenge(ctx context.Context, id string, at time.Time) (bool, error)

	CreateSession(ctx context.Context, s *Session) error
	GetSession(ctx context.Context, id string) (*Session, error)
	// ListActiveSessions returns sessions of the account that are neither
	// revoked nor expired at now, oldest first.
	ListActiveSessions(ctx context.Context, accountID string, now time.Time) ([]Session, error)
	// RevokeSession sets RevokedAt if the session is unrevoked and reports
	// whether this call did it.
	RevokeSession(ctx context.Context, id string, at time.Time) (bool, error)
}

// Page is one page of a list ordered by id. Ids are UUIDv7-based and so sort
// in creation order; the cursor is the last id of the page, which keeps
// pagination stable when rows are inserted meanwhile.
type Page[T any] struct {
	Items      []T
	HasMore    bool
	NextCursor string // set only when HasMore
	TotalCount int    // rows matching the filter, ignoring Limit and Cursor
}

// AllPages reads every item of a paged list, calling page with each next
// cursor ("" first) until a page says there is no more.
func AllPages[T any](page func(cursor string) (Page[T], error)) ([]T, error) {
	var out []T
	cursor := ""
	for {
		p, err := page(cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if !p.HasMore {
			return out, nil
		}
		cursor = p.NextCursor
	}
}

// Customer is an end user of the platform.
type Customer struct {
	ID                 string // Customer:<uuid>
	PlatformCustomerID string
	CustomerType       string // INDIVIDUAL or BUSINESS
	Email              string // as given; may be empty
	UmaAddress         string
	FullName           string
	KYCStatus          string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// KYBStatus is a business customer's verification status (empty when
	// none is claimed).
	KYBStatus string
	// Profile is the customer's other fields as the service's JSON
	// document (region, currencies, phone number, address, the fields of
	// its type); nil when it has none.
	Profile []byte
	// Identifier is the individual's identification number sealed at rest
	// (service/atrest); nil when none was given.
	Identifier []byte
	// DeletedAt is when the customer was deleted; zero while it is not.
	DeletedAt time.Time
}

// CustomerFilter selects customers; empty fields do not filter.
type CustomerFilter struct {
	PlatformCustomerID string
	CustomerType       string
	Limit              int    // 1..100; implementations treat 0 as 20
	Cursor             string // id after which the page starts

	// IncludeDeleted lists deleted customers too.
	IncludeDeleted bool
}

// InternalAccount is an account held inside the service, such as a
// customer's embedded wallet.
type InternalAccount struct {
	ID             string // InternalAccount:<uuid>
	CustomerID     string // empty for platform accounts
	Type           string // EMBEDDED_WALLET, INTERNAL_FIAT, INTERNAL_CRYPTO
	Status         string // ACTIVE, ...
	Currency       string // ISO 4217 code
	PrivateEnabled bool
	// Available is the spendable balance and Held the money executed
	// payments have taken from it but that has not left yet, both in the
	// smallest unit of Currency. Only MoneyTx methods change them.
	Available, Held int64
	// WalletSecret is the wallet's BIP-39 mnemonic sealed at rest (see
	// service/atrest); nil when none was made yet.
	WalletSecret []byte
	CreatedAt    time.Time
	UpdatedAt    time.Time

	// DepositReference is the account's deposit reference (see
	// NewDepositReference): the code a bank transfer into the account
	// quotes. CreateInternalAccount makes one when it is empty; it never
	// changes and is never given to another account.
	DepositReference string
}

// InternalAccountFilter selects internal accounts; empty fields do not filter.
type InternalAccountFilter struct {
	CustomerID string
	Type       string
	Currency   string
	Limit      int
	Cursor     string

	// Platform selects only the platform's own accounts (no customer);
	// CustomerID is then ignored.
	Platform bool
	// IDs, when not nil, keeps only these accounts (an agent's allow-list).
	IDs []string
}

// Credential is an authentication method of an internal account (AuthMethod
// on the wire).
type Credential struct {
	ID           string // AuthMethod:<uuid>
	AccountID    string // InternalAccount:<uuid>
	Type         string // EMAIL_OTP, PASSKEY, OAUTH
	Nickname     string
	CredentialID string // PASSKEY only: base64url rawId
	// Passkey is the WebAuthn credential record as JSON (PASSKEY only) and
	// SignCount the last accepted signature counter.
	Passkey   []byte
	SignCount int64
	// OIDCIssuer, OIDCSubject and OIDCAudience are the identity of an
	// OAUTH credential (the token's iss, sub and aud).
	OIDCIssuer, OIDCSubject, OIDCAudience string
	FailedAttempts                        int
	LockedUntil                           time.Time
	CreatedAt                             time.Time
	UpdatedAt                             time.Time
}

// OTP is one issuance of an e-mail one-time code together with the target
// key pair the client seals the code to.
type OTP struct {
	ID               string
	CredentialID     string
	CodeHash         []byte // keyed MAC of the code, the issuance id and the credential id
	TargetPrivateKey []byte // 32-byte P-256 scalar, sealed with the at-rest key
	CreatedAt        time.Time
	ExpiresAt        time.Time
	UsedAt           time.Time
}

// Challenge is a pending signed retry: the 202 answer of an operation that
// needs a wallet signature, bound to everything the retry must repeat.
type Challenge struct {
	ID        string // Request:<uuid>
	Operation string // e.g. "auth.credentials.verify"
	TargetID  string // the path id the operation acts on
	AccountID string // InternalAccount:<uuid>
	BodyHash  []byte // SHA-256 of the canonical request body
	Payload   string // payloadToSign, byte for byte
	PublicKey []byte // optional: the key the retry must be signed with (SEC1)
	CreatedAt time.Time
	ExpiresAt time.Time
	// ConsumedAt is set once a retry succeeded.
	ConsumedAt time.Time
}

// Session is a wallet session issued by verifying a credential.
type Session struct {
	ID           string // Session:<uuid>
	AccountID    string
	CredentialID string // AuthMethod id that issued it
	Type         string // type of that credential
	Nickname     string
	PublicKey    []byte // 33-byte compressed SEC1 session API key
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ExpiresAt    time.Time
	RevokedAt    time.Time
}

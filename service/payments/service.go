// Package payments is the payments service's domain: every operation of
// spec/payments-service-interface.md (version 2025-10-13) as a function that
// takes a typed request and returns a typed result or an *[Error], over a
// SQL store, with the wallet cryptography done for real. It knows nothing
// of HTTP: package service is the thin HTTP layer over it (routing,
// credentials, decoding, the code-to-status table, the signed-retry
// headers), and the workers here and the operator's commands call the same
// operations.
//
// # Adding an operation
//
// Write a method of [Service] in the file of its area: it checks its
// request and names every bad field at once (fieldErrors), runs its effect
// with commit (writes, one transaction, events emitted in it) or read,
// refuses with *[Error] (a code of the reference API; add a new code to the
// HTTP layer's statusOf table) and returns the resource as the wire type the
// API answers with. Its signature is what the HTTP layer reads: path values
// as strings, a filter struct whose fields carry query (and path) tags, a
// request body type, the [Principal] or [AgentPrincipal] that calls. An
// operation that needs a wallet signature takes a [SignedCall] and returns a
// [Signed] result (see signedretry.go); one that moves money takes a [Once]
// and answers an [Answer] (idempotency.go): it runs its internal form under
// once, which passes the Idempotency-Key record to its commit as a then, the
// after-effect an agent operation also passes explicitly. Then add its one
// line to the HTTP layer's route table (service/routes.go) and describe it
// in service/openapi.yaml.
//
// # Modes
//
// In [ModeProduction] every signed retry needs a stamp that verifies. In
// [ModeSandbox] the literal `sandbox-valid-signature` is accepted in place of
// a stamp, as the spec's Authentication §4 says; the sandbox operations
// (funding) answer, and the last digits of destinations choose verification
// and payment outcomes (grid-api-facts §5).
//
// # Signed retries
//
// Operations that need a wallet signature answer first with a challenge (a
// payloadToSign and a requestId); see signedretry.go. The challenge lives in
// the store, so any instance can complete a retry another instance started.
//
// # Webhooks
//
// Every state change the platform hears about is an event, recorded in the
// change's own store transaction as one row of an append-only event log
// (webhooks.go). The worker [Service.RunWorkers] starts
// (webhookworker.go) catalogues the log in commit order, giving each event
// its resource's next sequence, and delivers the events to each webhook
// endpoint that wants them (webhookendpoints.go) with a cursor and
// retries of its own, in order per resource, signed by every active key
// generation (webhookkeys.go). The platform lists the events (events.go)
// for Config.EventRetention. Instances sharing a database share all of it.
package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"paywallet/internal/telemetry"
	"paywallet/service/atrest"
	"paywallet/service/mail"
	"paywallet/service/oidc"
	"paywallet/service/rates"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
)

// Mode selects how strictly signed actions are checked.
type Mode string

// Modes of the service.
const (
	ModeProduction Mode = "production"
	ModeSandbox    Mode = "sandbox"
)

// ParseMode accepts "production" and "sandbox".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeProduction, ModeSandbox:
		return Mode(s), nil
	}
	return "", fmt.Errorf("service: unknown mode %q (want production or sandbox)", s)
}

// Config configures a Service. Store, Mailer and PlatformCredential are required.
type Config struct {
	Store  store.Store
	Mailer mail.Sender
	// Mode is ModeProduction when empty.
	Mode Mode
	// PlatformCredential is "<api token id>:<api client secret>", the only
	// credential platform endpoints accept.
	PlatformCredential string
	// MailFrom is the sender of OTP e-mail.
	MailFrom string
	// UMADomain is the domain of generated UMA addresses.
	UMADomain string
	// EndUserTerms are the versions of the End User Terms a customer's
	// endUserTermsConsent.termsVersion may name, the current one last
	// (GET /customers/end-user-terms). V1 at
	// https://<UMADomain>/end-user-terms when empty.
	EndUserTerms []EndUserTerms
	// WalletCurrency is the currency of new embedded wallets (ISO 4217).
	WalletCurrency string

	SessionTTL      time.Duration // 15 minutes when zero
	OTPTTL          time.Duration // 5 minutes when zero
	ChallengeTTL    time.Duration // 5 minutes when zero
	MaxOTPFailures  int           // 5 when zero
	LockoutDuration time.Duration // 15 minutes when zero
	// OTPResendInterval is the least time between two codes for one
	// credential, so nobody can use the service to flood an inbox.
	// 30 seconds when zero; negative disables it.
	OTPResendInterval time.Duration
	// PasskeyChallengeInterval is the least time between two login
	// challenges of one passkey. 2 seconds when zero; negative disables it.
	PasskeyChallengeInterval time.Duration

	// AtRestKey is the 32-byte key that seals secrets in the store (wallet
	// mnemonics, OTP target keys, the target-bundle signer key) and from
	// which the key of the stored OTP code hashes is derived. Required;
	// every instance sharing a database needs the same key, and a database
	// cannot be used without the key it was started with.
	AtRestKey []byte

	// WebAuthnRPID is the passkey relying party id (a registrable domain,
	// "localhost" in development); WebAuthnOrigins are the exact origins
	// (scheme, host, port) the wallet pages are served from. Required.
	WebAuthnRPID    string
	WebAuthnOrigins []string
	// WebAuthnRPName is shown by authenticators; "Wallet" when empty.
	WebAuthnRPName string

	// OIDCProviders are the only issuers whose ID tokens OAUTH credentials
	// accept. HTTPClient fetches their keys (a client with a 10 s timeout
	// when nil).
	OIDCProviders []oidc.Provider
	HTTPClient    *http.Client

	// Rates prices quotes (rates.Default() when nil).
	Rates *rates.Source
	// QuoteTTL, when positive, replaces every rail's quote lifetime.
	QuoteTTL time.Duration
	// SettlementDelay, when positive, replaces every rail's settlement
	// time (how long an executed payment stays PROCESSING).
	SettlementDelay time.Duration
	// LongPaymentDelay is how long a sandbox "long payment" (destination
	// ending in 003) stays PROCESSING; 6 minutes when zero.
	LongPaymentDelay time.Duration
	// IncomingApprovalWindow is how long an incoming UMA payment waits
	// for the platform's approval before it fails with
	// PAYMENT_APPROVAL_TIMED_OUT; 5 minutes when zero.
	IncomingApprovalWindow time.Duration
	// CounterpartyInformation lists the counterpartyInformation keys
	// (see CounterpartyFields) quotes and transactions carry, read from
	// the destination's beneficiary. None when empty.
	CounterpartyInformation []string

	// DepositAccounts are the operator's receiving bank accounts, by
	// currency (ISO 4217): each is the accountOrWalletInfo of a bank
	// account in that currency as the reference's PaymentInstructions show
	// it (accountType, the account's identifiers, bankName, paymentRails,
	// …; no reference). The fundingPaymentInstructions of every customer's
	// internal account in that currency show it with the account's own
	// deposit reference; a transfer quoting the reference is credited when
	// the operator records it (RecordDeposit). For a currency without one,
	// the instructions give only the reference (and, in sandbox mode, fixed
	// sandbox bank details where the service has them).
	DepositAccounts map[string]map[string]any

	// WalletURL is where the wallet's pages are served (scheme, host and
	// any path prefix): the security e-mails link to
	// <WalletURL>/sign-out-everywhere#<token>. When empty they tell the
	// person to open the wallet's Security page instead.
	WalletURL string

	// WebhookURL, when set, becomes the platform's webhookEndpoint (the
	// default endpoint's URL) at start, as PATCH /config would set it.
	WebhookURL string
	// StepUp, when set, is the step-up policy written into the platform
	// configuration at every start (flag --step-up); nil leaves the
	// stored one (PATCH /config), which is none at first.
	StepUp *StepUpPolicy
	// NoEvents turns the event log off: no event is recorded, so none
	// is delivered or listed. For a deployment that wants neither, and
	// for measuring what recording costs.
	NoEvents bool
	// EventRetention is how long events are kept (GET /events, replays):
	// 30 days when zero.
	EventRetention time.Duration
	// WebhookDisableAfter is how long an endpoint's deliveries may all
	// fail before it is disabled: 72 hours when zero.
	WebhookDisableAfter time.Duration
	// WebhookKeyOverlap is how long a rotated-out signing key keeps
	// signing beside the new one: 24 hours when zero.
	WebhookKeyOverlap time.Duration
	// OperatorEmail gets the service's notices to its operator (an
	// endpoint disabled); they are only logged when empty.
	OperatorEmail string
	// WebhookClient delivers webhooks: a client with a 10 s timeout that
	// follows no redirects when nil.
	WebhookClient *http.Client
	// WebhookRetryBase is the wait after a webhook's first failed attempt,
	// doubled after each further failure up to WebhookRetryMax, with
	// jitter; WebhookRetryFor is how long an event is retried before it is
	// marked FAILED. 5 s, 1 h and 72 h when zero.
	WebhookRetryBase, WebhookRetryMax, WebhookRetryFor time.Duration
	// WebhookPollInterval is how often the delivery worker looks for due
	// events that no change on this instance announced (events of other
	// instances, retries). 250 ms when zero.
	WebhookPollInterval time.Duration
	// WebhookGather is how long the worker, woken by a change, waits for
	// more changes before it delivers, and under a steady stream of
	// changes how far apart its rounds start: a round costs a transaction
	// (on SQLite, time on the one connection the API waits for) whatever
	// it carries. 20 ms when zero, so that at a few hundred changes a
	// second a round carries a dozen events or more, while an event still
	// leaves well within the delivery budget (DESIGN: p50 ≤ 100 ms, aim
	// 20); negative for none.
	WebhookGather time.Duration

	// Now is the clock; tests inject one. Defaults to time.Now.
	Now    func() time.Time
	Logger *slog.Logger

	// Registry, when set, gets the service's Prometheus series (the
	// HTTP layer's requests, the workers' backlog and lag, sign-ins); nil
	// exports none. A process shares one registry between its parts
	// (the wallet binary: the BFF's series and its embedded service's).
	Registry *prometheus.Registry
	// TracerProvider, when set, traces each HTTP request with a server
	// span (the store's spans, which serviceconfig turns on with the same
	// provider, are its children); nil traces nothing. Never the global
	// provider: several services run in one test binary.
	TracerProvider trace.TracerProvider
}

// Service is the payments service.
type Service struct {
	cfg    Config
	store  store.Store
	mailer mail.Sender
	log    *slog.Logger
	mode   Mode
	signer *walletcrypto.PrivateKey
	box    *atrest.Box
	// hooks is the webhooks' state: the signing keys as last read, the
	// parsed platform configuration, the worker's wake-up.
	hooks webhooks
	// eventsPaused is PauseEvents'.
	eventsPaused atomic.Bool
	// otpMACKey keys the stored hashes of OTP codes (codeMAC); derived
	// from the at-rest key, never stored.
	otpMACKey []byte
	// webauthn is the passkey relying party; oidc verifies OAuth tokens
	// (nil when no issuer is configured).
	webauthn *webauthn.WebAuthn
	oidc     *oidc.Verifier
	rates    *rates.Source
	// metrics are the workers' and sign-ins' series (metrics.go).
	metrics *metrics
}

// New validates cfg, loads (or on first start creates) the target-bundle
// signer key from the store, and returns the service.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("service: Config.Store is required")
	}
	if cfg.Mailer == nil {
		return nil, errors.New("service: Config.Mailer is required")
	}
	id, secret, ok := strings.Cut(cfg.PlatformCredential, ":")
	if !ok || id == "" || secret == "" {
		return nil, errors.New("service: Config.PlatformCredential must be <token id>:<secret>")
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeProduction
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	if why := validWalletURL(cfg.WalletURL); why != "" {
		return nil, errors.New("service: Config.WalletURL " + why)
	}
	if cfg.MailFrom == "" {
		cfg.MailFrom = "Wallet <no-reply@localhost>"
	}
	if cfg.UMADomain == "" {
		cfg.UMADomain = "uma.localhost"
	}
	if len(cfg.EndUserTerms) == 0 {
		cfg.EndUserTerms = defaultEndUserTerms(cfg.UMADomain)
	}
	if err := checkEndUserTerms(cfg.EndUserTerms); err != nil {
		return nil, err
	}
	if cfg.WalletCurrency == "" {
		cfg.WalletCurrency = "USD"
	}
	setDefault(&cfg.SessionTTL, 15*time.Minute)
	setDefault(&cfg.OTPTTL, 5*time.Minute)
	setDefault(&cfg.ChallengeTTL, 5*time.Minute)
	setDefault(&cfg.LockoutDuration, 15*time.Minute)
	setDefault(&cfg.OTPResendInterval, 30*time.Second)
	setDefault(&cfg.PasskeyChallengeInterval, 2*time.Second)
	setDefault(&cfg.LongPaymentDelay, 6*time.Minute)
	setDefault(&cfg.IncomingApprovalWindow, 5*time.Minute)
	setDefault(&cfg.WebhookRetryBase, 5*time.Second)
	setDefault(&cfg.WebhookRetryMax, time.Hour)
	setDefault(&cfg.WebhookRetryFor, 72*time.Hour)
	setDefault(&cfg.WebhookPollInterval, 250*time.Millisecond)
	setDefault(&cfg.WebhookGather, 20*time.Millisecond)
	for name, d := range map[string]time.Duration{"EventRetention": cfg.EventRetention,
		"WebhookDisableAfter": cfg.WebhookDisableAfter, "WebhookKeyOverlap": cfg.WebhookKeyOverlap,
		"WebhookRetryFor": cfg.WebhookRetryFor} {
		if d < 0 {
			// A negative retention would drop every event at once.
			return nil, fmt.Errorf("service: Config.%s must not be negative", name)
		}
	}
	setDefault(&cfg.EventRetention, 30*24*time.Hour)
	setDefault(&cfg.WebhookDisableAfter, 72*time.Hour)
	setDefault(&cfg.WebhookKeyOverlap, 24*time.Hour)
	if cfg.WebhookClient == nil {
		// The worker sends up to webhookParallel deliveries at once to one
		// host: keep that many connections alive (the default keeps
		// two), or each round opens and closes most of them.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = webhookParallel
		cfg.WebhookClient = &http.Client{Timeout: 10 * time.Second, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Rates == nil {
		cfg.Rates = rates.Default()
	}
	if _, ok := cfg.Rates.Currency(cfg.WalletCurrency); !ok {
		return nil, fmt.Errorf("service: the rates source has no currency %q (the wallet currency)", cfg.WalletCurrency)
	}
	for _, k := range cfg.CounterpartyInformation {
		if !slices.Contains(CounterpartyFields, k) {
			return nil, fmt.Errorf("service: unknown counterpartyInformation key %q (want one of %v)", k, CounterpartyFields)
		}
	}
	if err := (&Service{cfg: cfg, rates: cfg.Rates, mode: cfg.Mode}).checkDepositAccounts(); err != nil {
		return nil, err
	}
	if cfg.WebAuthnRPName == "" {
		cfg.WebAuthnRPName = "Wallet"
	}
	if cfg.MaxOTPFailures == 0 {
		cfg.MaxOTPFailures = 5
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Every line logged with a request's context carries its request_id.
	cfg.Logger = slog.New(telemetry.EnsureLogHandler(cfg.Logger.Handler()))
	s := &Service{cfg: cfg, store: cfg.Store, mailer: cfg.Mailer, log: cfg.Logger, mode: cfg.Mode, rates: cfg.Rates}
	s.hooks.wake = make(chan struct{}, 1)
	var err error
	if s.metrics, err = newMetrics(cfg.Registry); err != nil {
		return nil, fmt.Errorf("service: Config.Registry: %w", err)
	}
	s.store = &outboxStore{Store: cfg.Store, wake: s.wakeWebhooks}
	if s.box, err = atrest.New(cfg.AtRestKey); err != nil {
		return nil, fmt.Errorf("service: Config.AtRestKey: %w", err)
	}
	if s.otpMACKey, err = otpMACKey(cfg.AtRestKey); err != nil {
		return nil, fmt.Errorf("service: Config.AtRestKey: %w", err)
	}
	if cfg.WebAuthnRPID == "" || len(cfg.WebAuthnOrigins) == 0 {
		return nil, errors.New("service: Config.WebAuthnRPID and WebAuthnOrigins are required")
	}
	if s.webauthn, err = newWebAuthn(&cfg); err != nil {
		return nil, fmt.Errorf("service: WebAuthn configuration: %w", err)
	}
	if len(cfg.OIDCProviders) > 0 {
		if s.oidc, err = oidc.NewVerifier(cfg.OIDCProviders, cfg.HTTPClient, cfg.Now); err != nil {
			return nil, fmt.Errorf("service: OIDC providers: %w", err)
		}
	}
	signer, err := s.loadSigner(ctx)
	if err != nil {
		return nil, err
	}
	s.signer = signer
	if err := s.initWebhooks(ctx); err != nil {
		return nil, err
	}
	if err := s.provisionPlatformAccounts(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}

const signerSetting = "otp_target_bundle_signer_key"

// signerLabel binds the sealed signer key to its settings row (the atrest
// label convention: the row, then the purpose).
const signerLabel = "Setting:" + signerSetting + "/signer-key"

// rawSignerSize is the length of the signer setting as versions before
// issue 14 stored it: the bare P-256 scalar. A sealed value is 29 bytes
// longer, so the two cannot be confused.
const rawSignerSize = 32

// errSignerRace is loadSigner's transaction losing its compare-and-set to a
// concurrent start; the next attempt reads what that start wrote.
var errSignerRace = errors.New("service: the signer key setting changed during its upgrade")

// loadSigner returns the key that signs OTP target bundles, export bundles
// and verification tokens. It is made once and kept in the store, so every
// instance and every restart signs with the same key and clients can pin its
// public half.
//
// The store holds it sealed with the at-rest key (label signerLabel): a copy
// of the database alone cannot forge bundles. Versions before issue 14
// stored the raw scalar; such a value is sealed and written back over it by
// a compare-and-set in the same transaction, keeping the key (and so the
// pinned public key). Instances starting at once on either back end agree:
// the insert keeps the first proposal, and of several upgrades of a raw
// value one commits while the others are retried (serialization failure on
// PostgreSQL, one writer at a time on SQLite) and then find it sealed.
func (s *Service) loadSigner(ctx context.Context) (*walletcrypto.PrivateKey, error) {
	fresh, err := walletcrypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	scalar := fresh.Bytes()
	proposal := s.box.Seal(scalar, signerLabel)
	clear(scalar)
	fresh.Wipe()
	var sealed []byte
	var upgraded bool
	for attempt := 0; ; attempt++ {
		err = s.store.Tx(ctx, func(tx store.Tx) error {
			upgraded = false
			stored, err := tx.PutSettingIfAbsent(ctx, signerSetting, proposal)
			if err != nil || len(stored) != rawSignerSize {
				sealed = stored
				return err
			}
			defer clear(stored)
			k, err := walletcrypto.NewPrivateKey(stored)
			if err != nil {
				return fmt.Errorf("the stored raw signer key is unusable: %w", err)
			}
			k.Wipe()
			sealed = s.box.Seal(stored, signerLabel)
			won, err := tx.ReplaceSetting(ctx, signerSetting, stored, sealed)
			if err == nil && !won {
				err = errSignerRace
			}
			upgraded = err == nil
			return err
		})
		if !errors.Is(err, errSignerRace) || attempt == 2 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("service: load signer key: %w", err)
	}
	if upgraded {
		s.log.InfoContext(ctx, "sealed the stored signer key with the at-rest key (it was stored raw by an older version)")
	}
	scalar, err = s.box.Open(sealed, signerLabel)
	if err != nil {
		return nil, fmt.Errorf("service: the stored signer key does not open with Config.AtRestKey (is it the key this database was first started with?): %w", err)
	}
	defer clear(scalar)
	k, err := walletcrypto.NewPrivateKey(scalar)
	if err != nil {
		return nil, fmt.Errorf("service: stored signer key is unusable: %w", err)
	}
	return k, nil
}

// SignerPublicKey is the key clients pin to check otpEncryptionTargetBundle.
func (s *Service) SignerPublicKey() *walletcrypto.PublicKey { return s.signer.PublicKey() }

// Mode reports the service's mode.
func (s *Service) Mode() Mode { return s.mode }

// now is the service clock at the store's precision.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Config is the configuration the service runs with: New's argument with
// its defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Now is the service clock (Config.Now) at the store's precision.
func (s *Service) Now() time.Time { return s.now() }

// Ping reads the one row every instance needs (the signer key) within
// ctx: a health check of the database.
func (s *Service) Ping(ctx context.Context) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.GetSetting(ctx, signerSetting)
		return err
	})
}

// Ready reports whether the service can take traffic: the store's own
// readiness check where it has one (the SQL store: the database answers
// within a second and has this binary's migrations), else Ping.
func (s *Service) Ready(ctx context.Context) error {
	if r, ok := s.cfg.Store.(interface{ Ready(context.Context) error }); ok {
		return r.Ready(ctx)
	}
	return s.Ping(ctx)
}

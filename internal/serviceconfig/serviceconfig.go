// Package serviceconfig turns command-line flags and environment variables
// into a running payments service: it opens the store, chooses the mailer
// (SMTP or the dev mailbox) and builds the service. Both binaries use it, so
// the standalone service and the embedded one are configured the same way.
//
// Every flag has an environment variable (shown in --help); a flag given on
// the command line wins over the environment.
package serviceconfig

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"paywallet/service"
	"paywallet/service/mail"
	"paywallet/service/oidc"
	"paywallet/service/rates"
	"paywallet/service/store/sqlstore"
)

// Options are the service's settings.
type Options struct {
	Database           string
	Mode               string
	PlatformCredential string
	SMTPAddr           string
	SMTPUsername       string
	SMTPPassword       string
	SMTPTLS            string
	MailFrom           string
	DevMailbox         bool
	WebAuthnRPID       string
	WebAuthnOrigins    string
	DataKey            string
	DataKeyFile        string
	OIDCProviders      string
	RatesFile          string
	QuoteTTL           time.Duration
	SettlementDelay    time.Duration
	CounterpartyInfo   string
	WebhookURL         string
	WalletURL          string
	OperatorEmail      string
	EventRetention     time.Duration
	WebhookDisable     time.Duration
	WebhookKeyOverlap  time.Duration
	// DepositAccountsFile is a JSON file of the operator's receiving bank
	// accounts by currency (service.Config.DepositAccounts).
	DepositAccountsFile string
	// EndUserTerms is the --end-user-terms list (service.Config.EndUserTerms).
	EndUserTerms string
	// StepUp is the --step-up policy; empty takes DefaultStepUp.
	StepUp string
	// DefaultStepUp is the policy when --step-up is empty: none for the
	// standalone service (the reference API's clients work unchanged,
	// and PATCH /config sets one), WalletStepUp for the embedded wallet.
	DefaultStepUp string

	// NoMail is set by commands that send no e-mail (paymentsd deposit):
	// Build then needs neither SMTP nor the dev mailbox, and the service's
	// mailer refuses to send.
	NoMail bool

	// DefaultOrigin is the WebAuthn origin used when --webauthn-origins is
	// empty: the embedded wallet sets it to the URL it serves.
	DefaultOrigin string
	// ExtraOIDCProviders are trusted besides --oidc-providers (the local
	// development issuer of `make run`).
	ExtraOIDCProviders []oidc.Provider

	// Registry, when set, gets the service's Prometheus series: its
	// requests, workers and sign-ins (service.Config.Registry) and the
	// database's pool and transactions. The binary sets it (not a flag):
	// paymentsd from its --metrics-listen, the wallet binary with the
	// registry its BFF shares.
	Registry *prometheus.Registry
	// TracerProvider, when set, traces the service's requests
	// (service.Config.TracerProvider) and the store's transactions and
	// statements (sqlstore.DB.SetTracerProvider). Set by the binary.
	TracerProvider trace.TracerProvider

	fs *flag.FlagSet // the flags Register added to, to tell flags from environment
}

// DevSwitch is a development-only switch of a command: a boolean flag with
// its environment variable. Production mode refuses it; see
// [Options.CheckDevelopment].
type DevSwitch struct {
	Flag string // without dashes, e.g. "dev-oidc"
	Env  string // e.g. "WALLET_DEV_OIDC"
	On   bool
	// Risk says what the switch gives away, for the error.
	Risk string
}

// CheckDevelopment refuses, in production mode, the dev mailbox and the
// command's other development-only switches: each would let anyone read
// sign-in codes or sign in as anyone. The error names the flag, and the
// environment variable when that is what turned it on. Call it after the
// flags are parsed; Build calls it too.
func (o *Options) CheckDevelopment(extra ...DevSwitch) error {
	mode, err := service.ParseMode(o.Mode)
	if err != nil {
		return err
	}
	if mode != service.ModeProduction {
		return nil
	}
	switches := append([]DevSwitch{{Flag: "dev-mailbox", Env: "WALLET_DEV_MAILBOX", On: o.DevMailbox,
		Risk: "anyone who can reach /dev/mailbox reads every sign-in code"}}, extra...)
	for _, s := range switches {
		if !s.On {
			continue
		}
		what := "--" + s.Flag
		if !o.setOnCommandLine(s.Flag) {
			what += " (turned on by the environment variable " + s.Env + ")"
		}
		return fmt.Errorf("%s is for development only and production mode refuses it: %s; "+
			"for development run with --mode sandbox", what, s.Risk)
	}
	return nil
}

// setOnCommandLine reports whether the flag was given on the command line
// (rather than taking its default from the environment).
func (o *Options) setOnCommandLine(name string) bool {
	set := false
	if o.fs != nil {
		o.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	}
	return set
}

// Register adds the service flags to fs, with defaults taken from the
// environment where set.
func (o *Options) Register(fs *flag.FlagSet) {
	o.fs = fs
	str(fs, &o.Database, "database", "WALLET_DATABASE", "./data/wallet.db",
		"SQLite file path, or a postgres:// URL for PostgreSQL (needed to run several service instances)")
	str(fs, &o.Mode, "mode", "WALLET_MODE", "production",
		"production (every signature checked) or sandbox (accepts Service-Wallet-Signature: sandbox-valid-signature)")
	str(fs, &o.PlatformCredential, "platform-credential", "WALLET_PLATFORM_CREDENTIAL", "",
		"platform API credential <token id>:<secret> (HTTP Basic); prefer the environment variable")
	str(fs, &o.SMTPAddr, "smtp-addr", "WALLET_SMTP_ADDR", "", "SMTP server host:port for OTP e-mail")
	str(fs, &o.SMTPUsername, "smtp-username", "WALLET_SMTP_USERNAME", "", "SMTP user name (AUTH PLAIN); empty for none")
	str(fs, &o.SMTPPassword, "smtp-password", "WALLET_SMTP_PASSWORD", "", "SMTP password; prefer the environment variable")
	str(fs, &o.SMTPTLS, "smtp-tls", "WALLET_SMTP_TLS", mail.TLSStartTLS, "SMTP TLS: starttls, tls (implicit, port 465) or none")
	str(fs, &o.MailFrom, "mail-from", "WALLET_MAIL_FROM", "Wallet <no-reply@localhost>", "From address of OTP e-mail")
	boolean(fs, &o.DevMailbox, "dev-mailbox", "WALLET_DEV_MAILBOX",
		"development only, refused in production mode: keep e-mail in memory and show it at /dev/mailbox (to loopback clients) instead of sending it (anyone who can reach that page reads every code)")
	str(fs, &o.WebAuthnRPID, "webauthn-rp-id", "WALLET_WEBAUTHN_RP_ID", "localhost", "passkey (WebAuthn) relying party id: the wallet's domain")
	str(fs, &o.WebAuthnOrigins, "webauthn-origins", "WALLET_WEBAUTHN_ORIGINS", "",
		"comma-separated exact origins the wallet pages are served from, e.g. https://wallet.example (default: the embedded wallet's own URL, else http://localhost:8080)")
	str(fs, &o.DataKey, "data-key", "WALLET_DATA_KEY", "",
		"64 hex characters: the key that seals secrets at rest (wallet recovery phrases, OTP keys); every instance on one database needs the same key")
	str(fs, &o.DataKeyFile, "data-key-file", "WALLET_DATA_KEY_FILE", "",
		"file holding the at-rest key, created (mode 0600) on first start when missing (default with SQLite: a file named after the database under "+
			"the per-user configuration directory, e.g. ~/.config/paywallet/keys/; wallet.key beside the database where an earlier version made it)")
	str(fs, &o.OIDCProviders, "oidc-providers", "WALLET_OIDC_PROVIDERS", "",
		"OAuth sign-in: comma-separated issuer=client-id pairs whose ID tokens are trusted, e.g. https://accounts.google.com=1234.apps.googleusercontent.com")
	str(fs, &o.RatesFile, "rates-file", "WALLET_RATES_FILE", "",
		"JSON rates table (currencies, reference rates, fees, rails) replacing the built-in one; see service/rates/rates.json")
	duration(fs, &o.QuoteTTL, "quote-ttl", "WALLET_QUOTE_TTL", "lifetime of every quote, replacing each rail's (3m instant, 15m standard); 0 keeps the rails'")
	duration(fs, &o.SettlementDelay, "settlement-delay", "WALLET_SETTLEMENT_DELAY", "how long an executed payment stays PROCESSING, replacing each rail's simulated settlement time; 0 keeps the rails'")
	str(fs, &o.CounterpartyInfo, "counterparty-info", "WALLET_COUNTERPARTY_INFO", "",
		"comma-separated counterpartyInformation keys quotes and transactions carry, from "+strings.Join(service.CounterpartyFields, ", "))
	str(fs, &o.WebhookURL, "webhook-url", "WALLET_WEBHOOK_URL", "",
		"the platform's webhook endpoint (absolute http or https URL), set at start as PATCH /config would; empty keeps the stored one")
	str(fs, &o.WalletURL, "wallet-url", "WALLET_URL", "",
		"where the wallet's pages are served (e.g. https://wallet.example): the security e-mails link to <wallet-url>/sign-out-everywhere#<token>; empty: they tell the person to open the wallet's Security page")
	str(fs, &o.OperatorEmail, "operator-email", "WALLET_OPERATOR_EMAIL", "",
		"e-mail address of the service's operator, told when a webhook endpoint is disabled after failing (empty: only logged)")
	duration(fs, &o.EventRetention, "event-retention", "WALLET_EVENT_RETENTION", "how long events are kept for GET /events and replays (0: 720h, 30 days)")
	duration(fs, &o.WebhookDisable, "webhook-disable-after", "WALLET_WEBHOOK_DISABLE_AFTER", "how long an endpoint's deliveries may all fail before it is disabled (0: 72h)")
	duration(fs, &o.WebhookKeyOverlap, "webhook-key-overlap", "WALLET_WEBHOOK_KEY_OVERLAP", "how long a rotated-out webhook signing key keeps signing beside the new one (0: 24h)")
	str(fs, &o.StepUp, "step-up", "WALLET_STEP_UP", "",
		"the actions of embedded wallets held until the person confirms them with a passkey or an e-mailed code: off, or a comma-separated list of "+
			"payments-over=AMOUNT CURRENCY (e.g. 100.00 USD, or its equivalent), first-payment (to a recipient), recipient-within=DURATION (added within, e.g. 24h), "+
			"export (the recovery phrase), sign-in-methods (adding or removing one), email (changing it); written into the platform configuration at start "+
			"(default: the stored policy, none at first; the embedded wallet: "+WalletStepUp+")")
	str(fs, &o.EndUserTerms, "end-user-terms", "WALLET_END_USER_TERMS", "",
		"comma-separated version=URL pairs of the End User Terms a customer's endUserTermsConsent.termsVersion may name, the current one last, "+
			"e.g. V1=https://example.com/terms/v1,V2=https://example.com/terms/v2 (default: V1=https://<UMA domain>/end-user-terms)")
	str(fs, &o.DepositAccountsFile, "deposit-accounts", "WALLET_DEPOSIT_ACCOUNTS", "",
		`JSON file of the operator's receiving bank accounts by currency, shown with each account's deposit reference in its fundingPaymentInstructions, e.g. {"USD": {"accountType": "USD_ACCOUNT", "accountNumber": "…", "routingNumber": "…", "bankName": "…"}}; without one for a currency the instructions give only the reference`)
}

func duration(fs *flag.FlagSet, p *time.Duration, name, env, usage string) {
	var def time.Duration
	if v, ok := os.LookupEnv(env); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	fs.DurationVar(p, name, def, usage+" ["+env+"]")
}

// rates loads --rates-file, or nil for the built-in table.
func (o *Options) rates() (*rates.Source, error) {
	if o.RatesFile == "" {
		return nil, nil
	}
	f, err := os.Open(o.RatesFile)
	if err != nil {
		return nil, fmt.Errorf("--rates-file: %w", err)
	}
	defer f.Close()
	src, err := rates.Load(f)
	if err != nil {
		return nil, fmt.Errorf("--rates-file %s: %w", o.RatesFile, err)
	}
	return src, nil
}

// counterpartyKeys splits --counterparty-info.
func (o *Options) counterpartyKeys() []string {
	var out []string
	for _, k := range strings.Split(o.CounterpartyInfo, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// providers parses --oidc-providers and adds the extra ones.
func (o *Options) providers() ([]oidc.Provider, error) {
	out := append([]oidc.Provider(nil), o.ExtraOIDCProviders...)
	for _, pair := range strings.Split(o.OIDCProviders, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		i := strings.LastIndex(pair, "=")
		if i <= 0 || i == len(pair)-1 {
			return nil, fmt.Errorf("--oidc-providers: %q is not issuer=client-id", pair)
		}
		out = append(out, oidc.Provider{Issuer: pair[:i], ClientID: pair[i+1:]})
	}
	return out, nil
}

// origins is the WebAuthn origin list in force.
func (o *Options) origins() []string {
	var out []string
	for _, s := range strings.Split(o.WebAuthnOrigins, ",") {
		if s = strings.TrimSuffix(strings.TrimSpace(s), "/"); s != "" {
			out = append(out, s)
		}
	}
	switch {
	case len(out) > 0:
		return out
	case o.DefaultOrigin != "":
		return []string{o.DefaultOrigin}
	}
	return []string{"http://localhost:8080"}
}

func str(fs *flag.FlagSet, p *string, name, env, def, usage string) {
	if v, ok := os.LookupEnv(env); ok {
		def = v
	}
	fs.StringVar(p, name, def, usage+" ["+env+"]")
}

func boolean(fs *flag.FlagSet, p *bool, name, env, usage string) {
	def := false
	if v, ok := os.LookupEnv(env); ok {
		def = v == "1" || strings.EqualFold(v, "true") || strings.EqualFold(v, "yes")
	}
	fs.BoolVar(p, name, def, usage+" ["+env+"]")
}

// Built is a running service with what the binary needs to wire around it.
type Built struct {
	Service *service.Service
	Mailbox *mail.Mailbox // nil unless the dev mailbox is on
	// PlatformCredential is the credential in force (generated when the
	// embedded service was started without one).
	PlatformCredential string
	// KeyFile is the file the at-rest key was read from ("" when it was
	// given with --data-key).
	KeyFile string
	close   func() error
}

// Close closes the store.
func (b *Built) Close() error { return b.close() }

// Build opens the store and builds the service. When generateCredential is
// set and no credential is configured, a random one is made: the embedded
// service is reachable only through the BFF in the same process, so nobody
// else needs to know it.
func (o *Options) Build(ctx context.Context, log *slog.Logger, mailboxURL string, generateCredential bool) (*Built, error) {
	mode, err := service.ParseMode(o.Mode)
	if err != nil {
		return nil, err
	}
	if err := o.CheckDevelopment(); err != nil {
		return nil, err
	}
	cred := o.PlatformCredential
	if cred == "" && generateCredential {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		cred = "embedded:" + hex.EncodeToString(b[:])
	}
	if cred == "" {
		return nil, errors.New("a platform credential is required: set WALLET_PLATFORM_CREDENTIAL=<token id>:<secret>")
	}

	var sender mail.Sender
	var box *mail.Mailbox
	switch {
	case o.NoMail:
		sender = noMail{}
	case o.SMTPAddr != "" && o.DevMailbox:
		return nil, errors.New("choose either --smtp-addr or --dev-mailbox, not both")
	case o.SMTPAddr != "":
		switch o.SMTPTLS {
		case mail.TLSStartTLS, mail.TLSImplicit, mail.TLSNone:
		default:
			return nil, fmt.Errorf("--smtp-tls must be starttls, tls or none, not %q", o.SMTPTLS)
		}
		sender = &mail.SMTP{Addr: o.SMTPAddr, Username: o.SMTPUsername, Password: o.SMTPPassword, TLS: o.SMTPTLS}
	case o.DevMailbox:
		box = &mail.Mailbox{Logger: log, URL: mailboxURL}
		sender = box
		log.Warn("dev mailbox is on: e-mail is not sent, it is shown at " + mailboxURL + " (development only)")
	default:
		return nil, errors.New("no way to send e-mail: configure SMTP (--smtp-addr) or, for development, --dev-mailbox")
	}

	providers, err := o.providers()
	if err != nil {
		return nil, err
	}
	key, keyFile, err := o.dataKey(log)
	if err != nil {
		return nil, err
	}
	rateTable, err := o.rates()
	if err != nil {
		return nil, err
	}
	deposits, err := o.depositAccounts()
	if err != nil {
		return nil, err
	}
	terms, err := o.endUserTerms()
	if err != nil {
		return nil, err
	}
	stepUp, err := o.stepUp(rateTable)
	if err != nil {
		return nil, err
	}
	st, err := sqlstore.Open(ctx, o.Database)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	svc, err := service.New(ctx, service.Config{
		StepUp:                  stepUp,
		Store:                   st,
		Mailer:                  sender,
		Mode:                    mode,
		PlatformCredential:      cred,
		MailFrom:                o.MailFrom,
		Logger:                  log,
		AtRestKey:               key,
		WebAuthnRPID:            o.WebAuthnRPID,
		WebAuthnOrigins:         o.origins(),
		OIDCProviders:           providers,
		Rates:                   rateTable,
		QuoteTTL:                o.QuoteTTL,
		SettlementDelay:         o.SettlementDelay,
		CounterpartyInformation: o.counterpartyKeys(),
		WebhookURL:              o.WebhookURL,
		WalletURL:               o.WalletURL,
		OperatorEmail:           o.OperatorEmail,
		EventRetention:          o.EventRetention,
		WebhookDisableAfter:     o.WebhookDisable,
		WebhookKeyOverlap:       o.WebhookKeyOverlap,
		DepositAccounts:         deposits,
		EndUserTerms:            terms,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &Built{Service: svc, Mailbox: box, PlatformCredential: cred, KeyFile: keyFile, close: st.Close}, nil
}

// WalletStepUp is the embedded wallet's step-up policy: what a person of a
// payments wallet expects to be asked again for.
const WalletStepUp = "payments-over=100.00 USD,first-payment,export,sign-in-methods,email"

// stepUp parses --step-up (or DefaultStepUp); nil leaves the stored
// policy, "off" writes one that holds nothing.
func (o *Options) stepUp(table *rates.Source) (*service.StepUpPolicy, error) {
	spec := o.StepUp
	if spec == "" {
		spec = o.DefaultStepUp
	}
	if spec == "" {
		return nil, nil
	}
	if strings.TrimSpace(spec) == "off" {
		return &service.StepUpPolicy{}, nil
	}
	if table == nil {
		table = rates.Default()
	}
	p, err := service.ParseStepUpPolicy(spec, func(code string) (int, bool) {
		c, ok := table.Currency(code)
		return c.Decimals, ok
	})
	if err != nil {
		return nil, fmt.Errorf("--step-up: %w", err)
	}
	return p, nil
}

// depositAccounts loads --deposit-accounts, or nil when it is not set.
func (o *Options) depositAccounts() (map[string]map[string]any, error) {
	if o.DepositAccountsFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(o.DepositAccountsFile)
	if err != nil {
		return nil, fmt.Errorf("--deposit-accounts: %w", err)
	}
	var out map[string]map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("--deposit-accounts %s: want a JSON object of bank accounts by currency: %w", o.DepositAccountsFile, err)
	}
	return out, nil
}

// endUserTerms parses --end-user-terms (nil when it is empty: the
// service's default).
func (o *Options) endUserTerms() ([]service.EndUserTerms, error) {
	var out []service.EndUserTerms
	for _, pair := range strings.Split(o.EndUserTerms, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		v, u, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(v) == "" || strings.TrimSpace(u) == "" {
			return nil, fmt.Errorf("--end-user-terms: %q is not version=URL", pair)
		}
		out = append(out, service.EndUserTerms{Version: strings.TrimSpace(v), URL: strings.TrimSpace(u)})
	}
	return out, nil
}

// noMail is the mailer of a command that sends no e-mail.
type noMail struct{}

func (noMail) Send(context.Context, mail.Message) error {
	return errors.New("this command sends no e-mail")
}

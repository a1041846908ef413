package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// StepUpPolicy is the operator's step-up policy: which actions of an
// embedded wallet are held until the person confirms them (stepup.go). The
// zero policy holds nothing, so the reference API's clients work unchanged;
// it is set with Config.StepUp (flag --step-up) or PATCH /config
// stepUpPolicy, and kept in the platform configuration.
type StepUpPolicy struct {
	// PaymentsOver holds a payment whose sending amount is above it, in
	// its currency or converted at the service's rates ("or its
	// equivalent"); nil: no amount holds a payment.
	PaymentsOver *PolicyAmount `json:"paymentsOver"`
	// FirstPaymentToRecipient holds a wallet's first payment to an
	// external account.
	FirstPaymentToRecipient bool `json:"firstPaymentToRecipient"`
	// RecipientAddedWithinHours holds a payment to an external account
	// added less than this many hours ago (0: off).
	RecipientAddedWithinHours int `json:"recipientAddedWithinHours"`
	// RecoveryPhraseExport, SignInMethodChanges and EmailChange hold
	// those actions.
	RecoveryPhraseExport bool `json:"recoveryPhraseExport"`
	SignInMethodChanges  bool `json:"signInMethodChanges"`
	EmailChange          bool `json:"emailChange"`
}

// PolicyAmount is an amount in the smallest unit of a currency.
type PolicyAmount struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// maxRecipientHours bounds RecipientAddedWithinHours (30 days).
const maxRecipientHours = 720

// check names every bad member, under prefix.
func (p *StepUpPolicy) check(s *Service, prefix string, fe *fieldErrors) {
	if a := p.PaymentsOver; a != nil {
		if a.Amount < 0 {
			fe.add(prefix+"paymentsOver.amount", "must be 0 or more (in the currency's smallest unit)")
		}
		if _, ok := s.rates.Currency(a.Currency); !ok {
			fe.add(prefix+"paymentsOver.currency", "must be a currency the service knows (ISO 4217)")
		}
	}
	if p.RecipientAddedWithinHours < 0 || p.RecipientAddedWithinHours > maxRecipientHours {
		fe.add(prefix+"recipientAddedWithinHours", fmt.Sprintf("must be 0 (off) to %d hours", maxRecipientHours))
	}
}

// ParseStepUpPolicy reads the --step-up flag: "off", or a comma-separated
// list of
//
//	payments-over=AMOUNT CURRENCY   a payment above the amount ("100.00 USD" or "100.00USD")
//	first-payment                   a wallet's first payment to a recipient
//	recipient-within=DURATION       a payment to a recipient added within the duration (e.g. 24h)
//	export                          a recovery-phrase export
//	sign-in-methods                 adding or removing a sign-in method
//	email                           changing the e-mail
//
// Amounts are in major units and converted with decimals, which the
// caller's currency table gives (decimals(code) false: unknown currency).
func ParseStepUpPolicy(spec string, decimals func(code string) (int, bool)) (*StepUpPolicy, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "off" {
		return nil, nil
	}
	p := &StepUpPolicy{}
	for _, item := range strings.Split(spec, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch name {
		case "payments-over":
			a, err := parseMajorAmount(value, decimals)
			if err != nil {
				return nil, fmt.Errorf("step-up: payments-over: %w", err)
			}
			p.PaymentsOver = a
		case "first-payment":
			p.FirstPaymentToRecipient = true
		case "recipient-within":
			d, err := time.ParseDuration(value)
			if err != nil || d < time.Hour || d > maxRecipientHours*time.Hour || d%time.Hour != 0 {
				return nil, fmt.Errorf("step-up: recipient-within: %q is not a whole number of hours from 1h to %dh", value, maxRecipientHours)
			}
			p.RecipientAddedWithinHours = int(d / time.Hour)
		case "export":
			p.RecoveryPhraseExport = true
		case "sign-in-methods":
			p.SignInMethodChanges = true
		case "email":
			p.EmailChange = true
		default:
			return nil, fmt.Errorf("step-up: unknown item %q (payments-over=AMOUNT CURRENCY, first-payment, recipient-within=DURATION, export, sign-in-methods, email, or off)", item)
		}
	}
	return p, nil
}

// parseMajorAmount reads "100.00 USD" (or "100.00USD", "100 USD").
func parseMajorAmount(v string, decimals func(string) (int, bool)) (*PolicyAmount, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return r >= 'A' && r <= 'Z' })
	if i <= 0 {
		return nil, fmt.Errorf("%q is not AMOUNT CURRENCY (e.g. 100.00 USD)", v)
	}
	num, code := strings.TrimSpace(v[:i]), v[i:]
	d, ok := decimals(code)
	if !ok {
		return nil, fmt.Errorf("unknown currency %q", code)
	}
	whole, frac, _ := strings.Cut(num, ".")
	if len(frac) > d {
		return nil, fmt.Errorf("%q has more decimals than %s has (%d)", num, code, d)
	}
	frac += strings.Repeat("0", d-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q is not an amount", num)
	}
	return &PolicyAmount{Amount: n, Currency: code}, nil
}

// stepUpPolicy is the policy in force (nil: none).
func (s *Service) stepUpPolicy(ctx context.Context, tx store.Tx) (*StepUpPolicy, error) {
	c, err := s.readConfig(ctx, tx)
	if err != nil {
		return nil, err
	}
	return c.StepUpPolicy, nil
}

// paymentNeed is the step-up a payment of amount (smallest units of
// currency) from wallet to the external account dst needs under the
// policy, or nil. what names it for a person.
func (s *Service) paymentNeed(ctx context.Context, tx store.Tx, action string, wallet *store.InternalAccount, dst *store.ExternalAccount,
	amount int64, currency string) (*stepUpNeed, error) {
	if wallet.Type != "EMBEDDED_WALLET" {
		return nil, nil
	}
	p, err := s.stepUpPolicy(ctx, tx)
	if err != nil || p == nil {
		return nil, err
	}
	var reasons []string
	if o := p.PaymentsOver; o != nil {
		eq, ok := s.rates.Equivalent(amount, currency, o.Currency)
		if !ok || eq > o.Amount {
			reasons = append(reasons, ReasonAmountOverThreshold)
		}
	}
	if p.FirstPaymentToRecipient {
		paid, err := tx.HasPaid(ctx, wallet.ID, dst.ID)
		if err != nil {
			return nil, err
		}
		if !paid {
			reasons = append(reasons, ReasonFirstPaymentToRecipient)
		}
	}
	if h := p.RecipientAddedWithinHours; h > 0 && s.now().Before(dst.CreatedAt.Add(time.Duration(h)*time.Hour)) {
		reasons = append(reasons, ReasonRecipientAddedRecently)
	}
	if len(reasons) == 0 {
		return nil, nil
	}
	payee := payeeName(dst)
	total := s.money(amount, currency)
	c, _ := s.rates.Currency(currency)
	return &stepUpNeed{
		action: action, reasons: reasons, accountID: wallet.ID,
		what: "a payment of " + total + " to " + payee,
		payment: &wire.SecurePaymentConfirmation{
			PayeeName:  payee,
			Total:      wire.PaymentTotal{Currency: currency, Value: decimalAmount(amount, c.Decimals)},
			Instrument: "Wallet balance (" + currency + ")",
		},
	}, nil
}

// payeeName is the recipient as a person knows it: the beneficiary's name,
// or the kind of account when the account names none.
func payeeName(dst *store.ExternalAccount) string {
	var info map[string]any
	if json.Unmarshal(dst.AccountInfo, &info) == nil {
		if n := beneficiaryName(info); n != "" {
			return n
		}
	}
	return strings.ReplaceAll(strings.ToLower(dst.AccountType), "_", " ") + " account"
}

// actionNeed is the step-up a signed-retry action needs under the policy,
// or nil: action is one of the policy's switches.
func (s *Service) actionNeed(ctx context.Context, tx store.Tx, action, accountID string) (*stepUpNeed, error) {
	p, err := s.stepUpPolicy(ctx, tx)
	if err != nil || p == nil {
		return nil, err
	}
	on := false
	switch action {
	case ActionRecoveryPhraseExport:
		on = p.RecoveryPhraseExport
	case ActionSignInMethodAdd, ActionSignInMethodRemove:
		on = p.SignInMethodChanges
	case ActionEmailChange:
		on = p.EmailChange
	}
	if !on {
		return nil, nil
	}
	return &stepUpNeed{action: action, reasons: []string{ReasonSensitiveAction}, accountID: accountID, what: actionNames[action]}, nil
}

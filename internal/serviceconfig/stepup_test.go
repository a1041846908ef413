package serviceconfig

import (
	"strings"
	"testing"
)

// TestStepUpFlag: the wallet's default, an explicit policy, off, and a bad
// value named.
func TestStepUpFlag(t *testing.T) {
	cases := []struct {
		flag, def string
		check     func(t *testing.T, spec string)
	}{
		{"", "", nil},
		{"", WalletStepUp, nil},
		{"payments-over=25.50 EUR,recipient-within=48h,email", WalletStepUp, nil},
		{"off", WalletStepUp, nil},
	}
	for _, c := range cases {
		o := &Options{StepUp: c.flag, DefaultStepUp: c.def}
		p, err := o.stepUp(nil)
		if err != nil {
			t.Fatalf("%q: %v", c.flag, err)
		}
		switch {
		case c.flag == "" && c.def == "":
			if p != nil {
				t.Fatalf("no flag, no default: %+v", p)
			}
		case c.flag == "":
			if p.PaymentsOver == nil || p.PaymentsOver.Amount != 10_000 || p.PaymentsOver.Currency != "USD" ||
				!p.FirstPaymentToRecipient || !p.RecoveryPhraseExport || !p.SignInMethodChanges || !p.EmailChange {
				t.Fatalf("wallet default %+v", p)
			}
		case c.flag == "off":
			if p == nil || p.PaymentsOver != nil || p.FirstPaymentToRecipient || p.RecoveryPhraseExport {
				t.Fatalf("off %+v", p)
			}
		default:
			if p.PaymentsOver.Amount != 2_550 || p.PaymentsOver.Currency != "EUR" || p.RecipientAddedWithinHours != 48 || !p.EmailChange ||
				p.FirstPaymentToRecipient {
				t.Fatalf("%q → %+v", c.flag, p)
			}
		}
	}
	for _, bad := range []string{"payments-over=1.234 USD", "payments-over=10 XXX", "recipient-within=90m", "sms"} {
		_, err := (&Options{StepUp: bad}).stepUp(nil)
		if err == nil || !strings.Contains(err.Error(), "--step-up") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

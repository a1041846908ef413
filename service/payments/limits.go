package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Personal limits of an embedded wallet (GET and PATCH
// /internal-accounts/{id}/limits; our extension). The person sets how much
// one payment may take (perPayment), how much may leave in any 24 hours
// (daily) and how long a new recipient waits before it can be paid
// (newRecipientCoolingOffHours). They guard against a stolen session: a
// thief who signs in cannot empty the wallet at once, nor pay an account
// they just added. So a change that makes the limits stricter applies at
// once, and one that relaxes them waits limitsLoosenDelay, during which
// the person (told by e-mail) can take it back. A pending change applies
// when its time has come, read lazily: there is no worker, every read
// (effectiveLimits) sees the limits as they are at that moment.
//
// The service enforces them (checkLimits) when a quote from the wallet is
// made, when it is executed (before the hold, in the execute's
// transaction) and on a transfer-out from the wallet.

// Codes of the refusals of a payment past a limit.
const (
	// CodeLimitExceeded (403) refuses a payment above perPayment.
	CodeLimitExceeded = "LIMIT_EXCEEDED"
	// CodeDailyVolumeLimitExceeded (429, the reference's code) refuses a
	// payment that would take the last 24 hours past daily.
	CodeDailyVolumeLimitExceeded = "DAILY_VOLUME_LIMIT_EXCEEDED"
	// CodeRecipientCoolingOff (403) refuses a payment to a recipient
	// added less than newRecipientCoolingOffHours ago.
	CodeRecipientCoolingOff = "RECIPIENT_COOLING_OFF"
)

const (
	opUpdateLimits = "internal-accounts.limits.update"
	// limitsLoosenDelay is how long a change that relaxes a limit waits.
	limitsLoosenDelay = 24 * time.Hour
	// maxCoolingOffHours is the longest cooling-off: 30 days.
	maxCoolingOffHours = 720
	// dailyWindow is the rolling window of the daily limit.
	dailyWindow = 24 * time.Hour
)

// GetWalletLimits is an embedded wallet's limits as they apply now (GET
// /internal-accounts/{id}/limits): a pending change whose time has come is
// shown applied.
func (s *Service) GetWalletLimits(ctx context.Context, id string) (wire.WalletLimits, error) {
	return read(ctx, s, func(tx store.Tx) (wire.WalletLimits, error) {
		acct, err := s.embeddedWallet(ctx, tx, id)
		if err != nil {
			return wire.WalletLimits{}, err
		}
		l, err := s.effectiveLimits(ctx, tx, acct.ID)
		if err != nil {
			return wire.WalletLimits{}, err
		}
		return limitsJSON(acct, l), nil
	})
}

// limitsChange is a PATCH body read: each member present (set) changes
// that limit; perPayment or daily nil removes it.
type limitsChange struct {
	perPaymentSet, dailySet, coolingOffSet bool
	perPayment, daily                      *int64
	coolingOffHours                        int
}

// UpdateWalletLimits changes an embedded wallet's limits (PATCH
// /internal-accounts/{id}/limits, a signed retry): the first call answers
// a challenge (ACTIVITY_TYPE_UPDATE_WALLET_LIMITS naming the wallet and
// the members of the body), the same body signed by an active session of
// the wallet applies it (applyLimitsChange) and answers the limits.
// Members are optional but one is needed; perPayment and daily take an
// amount or null (no limit), newRecipientCoolingOffHours 0..720. Every bad
// member is named before any challenge is issued.
func (s *Service) UpdateWalletLimits(ctx context.Context, id string, body json.RawMessage, call SignedCall, user EndUser) (Signed[wire.WalletLimits], error) {
	ch, err := readLimitsChange(body)
	if err != nil {
		return Signed[wire.WalletLimits]{}, err
	}
	var notice *securityNotice
	out, err := walletOperation(ctx, s, id, opUpdateLimits, call,
		func(acct *store.InternalAccount) (string, map[string]any) {
			params := map[string]any{"walletId": acct.ID, "currency": acct.Currency}
			if ch.perPaymentSet {
				params["perPayment"] = ch.perPayment
			}
			if ch.dailySet {
				params["daily"] = ch.daily
			}
			if ch.coolingOffSet {
				params["newRecipientCoolingOffHours"] = ch.coolingOffHours
			}
			return "ACTIVITY_TYPE_UPDATE_WALLET_LIMITS", params
		},
		func(tx store.Tx, acct *store.InternalAccount) (*stepUpNeed, error) {
			// Loosening one's limits always needs the person's own
			// confirmation (stepup.go), whatever the operator's
			// policy: it is what the limits are there to slow down.
			l, err := s.effectiveLimits(ctx, tx, acct.ID)
			if err != nil || !loosens(l, ch) {
				return nil, err
			}
			return &stepUpNeed{action: ActionLimitsLoosen, reasons: []string{ReasonLimitsLoosened}, accountID: acct.ID,
				what: actionNames[ActionLimitsLoosen]}, nil
		},
		func(tx store.Tx, acct *store.InternalAccount) (wire.WalletLimits, error) {
			notice = nil
			out, n, err := s.applyLimitsChange(ctx, tx, acct, ch, user)
			notice = n
			return out, err
		})
	if err == nil && out.Challenge == nil {
		s.send(ctx, notice)
	}
	return out, err
}

// loosens reports whether ch makes any limit of l laxer (higher, removed,
// a shorter cooling-off).
func loosens(l *store.WalletLimits, ch limitsChange) bool {
	return (ch.perPaymentSet && amountChange(l.PerPayment, ch.perPayment) == looser) ||
		(ch.dailySet && amountChange(l.Daily, ch.daily) == looser) ||
		(ch.coolingOffSet && ch.coolingOffHours < l.CoolingOffHours)
}

// readLimitsChange reads a PATCH body, naming every bad member: an unknown
// one, an amount that is not an integer from 1 to 9000000000000000 (or
// null), a cooling-off that is not an integer from 0 to 720. Zero is no
// amount limit on purpose: a client that means "no limit" must say null.
func readLimitsChange(body json.RawMessage) (limitsChange, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return limitsChange{}, errorf(CodeInvalidRequestFormat, "the body must be a JSON object (WalletLimitsUpdateRequest)")
	}
	var ch limitsChange
	var fe fieldErrors
	amount := func(name string, dst **int64) {
		raw := members[name]
		if isNull(raw) {
			return
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil || v < 1 || v > maxLockedAmount {
			fe.add(name, "must be an integer from 1 to 9000000000000000 (smallest unit of the wallet's currency), or null for no limit")
			return
		}
		*dst = &v
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch name {
		case "perPayment":
			ch.perPaymentSet = true
			amount(name, &ch.perPayment)
		case "daily":
			ch.dailySet = true
			amount(name, &ch.daily)
		case "newRecipientCoolingOffHours":
			ch.coolingOffSet = true
			v, err := strconv.Atoi(string(bytes.TrimSpace(members[name])))
			if err != nil || v < 0 || v > maxCoolingOffHours {
				fe.add(name, "must be an integer from 0 to 720 (hours; 0 turns the cooling-off off)")
			}
			ch.coolingOffHours = v
		default:
			fe.add(name, "is not a member of WalletLimitsUpdateRequest (perPayment, daily, newRecipientCoolingOffHours)")
		}
	}
	if len(members) == 0 {
		fe.add("perPayment", "at least one of perPayment, daily and newRecipientCoolingOffHours must be given")
	}
	if e := fe.err(); e != nil {
		return limitsChange{}, e
	}
	return ch, nil
}

// applyLimitsChange is where a change of a wallet's limits is applied, in
// the transaction of the signed retry: each member the change names is
// compared with the limit as it applies now. A stricter value (a lower
// amount, an amount where there was none, a longer cooling-off) applies at
// once; the same value changes nothing; a laxer one (higher, removed,
// shorter) becomes pending, and the pending change's effectiveAt becomes
// now + 24 h (a second loosening restarts the wait of the whole pending
// change, so nothing relaxes sooner than 24 h after the last loosening
// was asked for). Either way the change replaces whatever was pending for
// the members it names; a pending change of other members stays as it
// was.
func (s *Service) applyLimitsChange(ctx context.Context, tx store.Tx, acct *store.InternalAccount, ch limitsChange, user EndUser) (wire.WalletLimits, *securityNotice, error) {
	now := s.now()
	l, err := s.effectiveLimits(ctx, tx, acct.ID)
	if err != nil {
		return wire.WalletLimits{}, nil, err
	}
	before := limitsJSON(acct, l)
	var p store.PendingLimits
	if l.Pending != nil {
		p = *l.Pending
	}
	loosened := false
	if ch.perPaymentSet {
		p.PerPaymentSet, p.PerPayment = false, nil
		switch amountChange(l.PerPayment, ch.perPayment) {
		case tighter:
			l.PerPayment = ch.perPayment
		case looser:
			p.PerPaymentSet, p.PerPayment, loosened = true, ch.perPayment, true
		}
	}
	if ch.dailySet {
		p.DailySet, p.Daily = false, nil
		switch amountChange(l.Daily, ch.daily) {
		case tighter:
			l.Daily = ch.daily
		case looser:
			p.DailySet, p.Daily, loosened = true, ch.daily, true
		}
	}
	if ch.coolingOffSet {
		p.CoolingOffSet, p.CoolingOffHours = false, 0
		switch {
		case ch.coolingOffHours > l.CoolingOffHours:
			l.CoolingOffHours = ch.coolingOffHours
		case ch.coolingOffHours < l.CoolingOffHours:
			p.CoolingOffSet, p.CoolingOffHours, loosened = true, ch.coolingOffHours, true
		}
	}
	if loosened {
		p.EffectiveAt = now.Add(limitsLoosenDelay)
	}
	l.Pending = nil
	if p.PerPaymentSet || p.DailySet || p.CoolingOffSet {
		l.Pending = &p
	}
	l.UpdatedAt = now
	if err := tx.PutWalletLimits(ctx, l); err != nil {
		return wire.WalletLimits{}, nil, err
	}
	after := limitsJSON(acct, l)
	details := map[string]any{"before": limitsRecord(before), "after": limitsRecord(after)}
	if l.Pending != nil {
		details["effectiveAt"] = timestamp(l.Pending.EffectiveAt)
	}
	if err := s.recordSecurity(ctx, tx, securityRecord{customerID: acct.CustomerID, accountID: acct.ID, typ: SecurityLimitsChanged,
		details: details, user: &user}); err != nil {
		return wire.WalletLimits{}, nil, err
	}
	n, err := s.newNotice(ctx, tx, acct.CustomerID, "", noticeLimitsChanged, s.limitsWords(acct, l))
	if err != nil {
		return wire.WalletLimits{}, nil, err
	}
	return after, n, nil
}

// limitsRecord is a WalletLimits as the security log keeps it: the
// limits and the pending change, nothing else.
func limitsRecord(w wire.WalletLimits) map[string]any {
	b, _ := json.Marshal(w)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "updatedAt")
	delete(m, "accountId")
	return m
}

// limitsWords tells the person their limits after a change, for the
// e-mail.
func (s *Service) limitsWords(acct *store.InternalAccount, l *store.WalletLimits) string {
	amount := func(v *int64) string {
		if v == nil {
			return "no limit"
		}
		return s.money(*v, acct.Currency)
	}
	out := "Your wallet's limits changed. They are now: per payment " + amount(l.PerPayment) + ", per day " + amount(l.Daily) +
		", new recipients wait " + hours(l.CoolingOffHours) + " before a payment."
	if p := l.Pending; p != nil {
		out += "\n\nA loosening you asked for applies from " + p.EffectiveAt.UTC().Format("15:04 MST on 2 January 2006") +
			"; until then the limits above apply. If you did not ask for it, set your limits again in your wallet's Security page."
	}
	return out
}

// direction is how a new limit compares with the one that applies.
type direction int

const (
	unchanged direction = iota
	tighter
	looser
)

// amountChange compares a new amount limit with the current one (nil: no
// limit).
func amountChange(current, next *int64) direction {
	switch {
	case current == nil && next == nil:
		return unchanged
	case next == nil:
		return looser
	case current == nil || *next < *current:
		return tighter
	case *next == *current:
		return unchanged
	}
	return looser
}

// effectiveLimits are the wallet's limits as they apply now: none when
// none were ever set, and a pending change whose effectiveAt has come
// applied (updatedAt then being its effectiveAt). The stored row is left
// as it is; the next change writes the applied state.
func (s *Service) effectiveLimits(ctx context.Context, tx store.Tx, accountID string) (*store.WalletLimits, error) {
	l, err := tx.GetWalletLimits(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return &store.WalletLimits{AccountID: accountID}, nil
	}
	if err != nil {
		return nil, err
	}
	if p := l.Pending; p != nil && !s.now().Before(p.EffectiveAt) {
		if p.PerPaymentSet {
			l.PerPayment = p.PerPayment
		}
		if p.DailySet {
			l.Daily = p.Daily
		}
		if p.CoolingOffSet {
			l.CoolingOffHours = p.CoolingOffHours
		}
		l.UpdatedAt, l.Pending = p.EffectiveAt, nil
	}
	return l, nil
}

// limitsJSON is the wire shape of a wallet's limits.
func limitsJSON(acct *store.InternalAccount, l *store.WalletLimits) wire.WalletLimits {
	out := wire.WalletLimits{AccountID: acct.ID, Currency: acct.Currency, PerPayment: l.PerPayment, Daily: l.Daily,
		NewRecipientCoolingOffHours: l.CoolingOffHours, UpdatedAt: timestamp(acct.CreatedAt)}
	if !l.UpdatedAt.IsZero() {
		out.UpdatedAt = timestamp(l.UpdatedAt)
	}
	if p := l.Pending; p != nil {
		out.Pending = &wire.PendingWalletLimits{
			PerPayment:  wire.PendingLimit{Set: p.PerPaymentSet, Amount: p.PerPayment},
			Daily:       wire.PendingLimit{Set: p.DailySet, Amount: p.Daily},
			EffectiveAt: timestamp(p.EffectiveAt),
		}
		if p.CoolingOffSet {
			out.Pending.NewRecipientCoolingOffHours = new(p.CoolingOffHours)
		}
	}
	return out
}

// checkLimits refuses a payment of amount (smallest unit of the wallet's
// currency) from the internal account walletID to the external account
// destinationID when it breaks one of the wallet's limits as they apply
// now, in this order: above perPayment (403 LIMIT_EXCEEDED); to a
// recipient added less than the cooling-off ago (403
// RECIPIENT_COOLING_OFF); past daily with what left the wallet in the last
// 24 hours (OutgoingSince: executed payments and transfer-outs, not
// failed, expired, rejected or refunded ones, nor quotes not executed)
// (429 DAILY_VOLUME_LIMIT_EXCEEDED). An account that is not an embedded
// wallet has no limits. It runs in the transaction that makes the payment,
// before anything is written: a refusal leaves nothing behind.
func (s *Service) checkLimits(ctx context.Context, tx store.Tx, walletID, destinationID string, amount int64) error {
	wallet, err := tx.GetInternalAccount(ctx, walletID)
	if err != nil {
		return err
	}
	if wallet.Type != "EMBEDDED_WALLET" {
		return nil
	}
	l, err := s.effectiveLimits(ctx, tx, wallet.ID)
	if err != nil {
		return err
	}
	cur := wallet.Currency
	if l.PerPayment != nil && amount > *l.PerPayment {
		return &Error{Code: CodeLimitExceeded,
			Message: fmt.Sprintf("This payment of %s is over your per-payment limit of %s. Send at most %s, or raise the limit in your wallet's security settings (a higher limit takes effect 24 hours after you set it).",
				s.money(amount, cur), s.money(*l.PerPayment, cur), s.money(*l.PerPayment, cur)),
			Details: map[string]any{"kind": "PER_PAYMENT", "limit": *l.PerPayment, "amount": amount, "currency": cur}}
	}
	if l.CoolingOffHours > 0 {
		dst, err := tx.GetExternalAccount(ctx, destinationID)
		if err != nil {
			return err
		}
		available := dst.CreatedAt.Add(time.Duration(l.CoolingOffHours) * time.Hour)
		if s.now().Before(available) {
			return &Error{Code: CodeRecipientCoolingOff,
				Message: fmt.Sprintf("You added this recipient less than %s ago, and your wallet waits %s before paying a new recipient. You can pay them from %s.",
					hours(l.CoolingOffHours), hours(l.CoolingOffHours), available.UTC().Format("2006-01-02 15:04 UTC")),
				Details: map[string]any{"availableAt": timestamp(available)}}
		}
	}
	if l.Daily != nil {
		now := s.now()
		since := now.Add(-dailyWindow)
		used, err := tx.OutgoingSince(ctx, wallet.ID, since)
		if err != nil {
			return err
		}
		if exceeds(used, amount, *l.Daily) {
			return s.dailyRefusal(ctx, tx, wallet.ID, since, now, *l.Daily, used, amount, cur)
		}
	}
	return nil
}

// dailyRefusal is the 429 DAILY_VOLUME_LIMIT_EXCEEDED of a payment of
// amount that would take what went out since (used) past daily. When the
// payment fits the limit at all, it says from when it fits, as earlier
// payments leave the window (details.availableAt, and Retry-After in
// seconds): the person learns when to try again, not only what is left.
func (s *Service) dailyRefusal(ctx context.Context, tx store.Tx, walletID string, since, now time.Time, daily, used, amount int64, cur string) error {
	details := map[string]any{"limit": daily, "used": used, "amount": amount, "currency": cur}
	if amount > daily {
		return &Error{Code: CodeDailyVolumeLimitExceeded, Details: details,
			Message: fmt.Sprintf("This payment of %s is over your daily limit of %s by itself. Send at most %s in 24 hours, or raise the limit in your wallet's security settings (a higher limit takes effect 24 hours after you set it).",
				s.money(amount, cur), s.money(daily, cur), s.money(daily, cur))}
	}
	msg := fmt.Sprintf("Your daily limit is %s and you have sent %s in the last 24 hours, so this payment of %s would go over it. You can send up to %s now",
		s.money(daily, cur), s.money(used, cur), s.money(amount, cur), s.money(max(daily-used, 0), cur))
	e := &Error{Code: CodeDailyVolumeLimitExceeded, Details: details}
	last, err := tx.NewestOutgoingOver(ctx, walletID, since, daily-amount)
	if err != nil {
		return err
	}
	if last.IsZero() { // cannot be while used+amount > daily; said plainly if it were
		e.Message = msg + ", or more as earlier payments pass 24 hours."
		return e
	}
	// A payment made exactly 24 hours ago still counts (the window
	// includes its start); one a microsecond older does not. The person
	// and Retry-After get whole seconds, rounded up.
	at := ceilTime(last.Add(dailyWindow+time.Microsecond), time.Second)
	details["availableAt"] = timestamp(at)
	e.RetryAfter = max(int((at.Sub(now)+time.Second-1)/time.Second), 1)
	e.Message = msg + fmt.Sprintf(", and this payment from %s, when earlier payments have passed 24 hours.",
		ceilTime(at, time.Minute).UTC().Format("2006-01-02 15:04 UTC"))
	return e
}

// ceilTime is t rounded up to a multiple of d: a time shown to the person
// to the second or the minute must not name one that is still refused.
func ceilTime(t time.Time, d time.Duration) time.Time {
	if r := t.Truncate(d); !r.Equal(t) {
		return r.Add(d)
	}
	return t
}

// hours is a cooling-off for a person: "1 hour", "48 hours".
func hours(n int) string {
	if n == 1 {
		return "1 hour"
	}
	return strconv.Itoa(n) + " hours"
}

// money is an amount in the smallest unit of currency as a person reads
// it: in the currency's units with its decimals and its code, "450.00
// USD". Exact (integer arithmetic); a currency the rates source does not
// know is shown in its smallest unit.
func (s *Service) money(amount int64, currency string) string {
	decimals := 0
	if c, ok := s.rates.Currency(currency); ok {
		decimals = c.Decimals
	}
	return decimalAmount(amount, decimals) + " " + currency
}

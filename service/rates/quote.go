package rates

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Side is the side of a quote whose amount is locked.
type Side string

const (
	// SideSending locks the amount the sender pays; fees come out of it.
	SideSending Side = "SENDING"
	// SideReceiving locks the amount the recipient gets; fees go on top.
	SideReceiving Side = "RECEIVING"
)

var (
	// ErrUnknownCurrency is a currency code the table does not have.
	ErrUnknownCurrency = errors.New("unknown currency")
	// ErrUnsupportedRail is a rail the receiving currency does not pay out
	// on; the wrapped message lists the rails it does offer.
	ErrUnsupportedRail = errors.New("unsupported payment rail")
	// ErrInvalidSide is a Request.Side other than SENDING or RECEIVING.
	ErrInvalidSide = errors.New("the locked side must be SENDING or RECEIVING")
)

// AmountError is an amount the corridor cannot quote: outside the sending
// currency's limits, too small to cover the fees, or too large for an int64
// result. Min and Max are sending amounts in smallest units: the sending
// currency's limits, except that for an amount too small to cover the fees
// Min is the least sending amount that delivers anything on the corridor
// (never below the currency's minimum). Reason is the message for the caller.
type AmountError struct {
	Min, Max int64
	Reason   string
}

func (e *AmountError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	return fmt.Sprintf("the sending amount must be between %d and %d", e.Min, e.Max)
}

// Request asks for a quote.
type Request struct {
	Sending, Receiving string // currency codes
	// Rail is the payout rail; "" picks the receiving currency's default
	// (none for a currency without rails, such as BTC).
	Rail string
	Side Side
	// Amount is the locked amount, > 0, in the smallest unit of the locked
	// side's currency.
	Amount int64
}

// RateDetails are the fee components of a quote, as the API shows them. The
// float64 fields are display values of exact rationals.
type RateDetails struct {
	CounterpartyMultiplier   float64 // m_c: smallest receiving units per micro-USD
	CounterpartyFixedFee     int64   // F_r, receiving units
	ServiceMultiplier        float64 // m_s: micro-USD per smallest sending unit
	ServiceFixedFee          int64   // F_s, sending units
	ServiceVariableFeeRate   float64 // v
	ServiceVariableFeeAmount int64   // V = ceil(S × v), sending units
}

// Quote is the priced answer to a [Request].
type Quote struct {
	Sending, Receiving Currency
	Rail               Rail // zero Name for a payout without a rail (BTC)
	TotalSending       int64
	TotalReceiving     int64
	FeesIncluded       int64 // sending units
	ReceivingFees      int64 // receiving units: a transaction's fees
	// ExchangeRate is sending major units per receiving major unit.
	ExchangeRate           float64
	Details                RateDetails
	MinSending, MaxSending int64
}

// ExchangeRate is one row of GET /exchange-rates: the price of one corridor
// and rail at a sending amount.
type ExchangeRate struct {
	Sending, Receiving                                     Currency
	Rail                                                   string
	MinSending, MaxSending, SendingAmount, ReceivingAmount int64
	ExchangeRate                                           float64
	// FixedFees is F_s + ceil(F_r / m) and TotalFees is feesIncluded, both
	// in sending units.
	FixedFees, TotalFees int64
}

// corridor holds a sending and a receiving currency's figures combined: the
// exact multiplier m = a/b and the display values.
type corridor struct {
	from, to *currency
	a, b     *big.Int // m = m_s × m_c = a/b in lowest terms, a, b > 0
	fs, fr   *big.Int // F_s and F_r

	serviceMult, counterpartyMult, exchangeRate, varRate float64

	// least is the least sending amount that delivers at least one
	// smallest receiving unit, the currency's limits aside.
	least *big.Int
}

func newCorridor(from, to *currency) *corridor {
	ms, mc := from.serviceMult, to.counterpartyMult
	if from == to {
		// Domestic: no conversion, so no spread; m is exactly 1.
		ms, mc = from.serviceMult0, to.counterpartyMult0
	}
	m := new(big.Rat).Mul(ms, mc)
	// exchangeRate = 10^dr / (10^ds × m).
	rate := new(big.Rat).SetFrac(pow10(to.pub.Decimals), pow10(from.pub.Decimals))
	rate.Quo(rate, m)
	c := &corridor{
		from: from,
		to:   to,
		a:    new(big.Int).Set(m.Num()),
		b:    new(big.Int).Set(m.Denom()),
		fs:   big.NewInt(from.fixedFee),
		fr:   big.NewInt(to.payoutFee),
	}
	c.serviceMult, _ = ms.Float64()
	c.counterpartyMult, _ = mc.Float64()
	c.exchangeRate, _ = rate.Float64()
	c.varRate, _ = from.varRate.Float64()
	c.least = c.inverse(big.NewInt(1))
	return c
}

// ceilDiv is ceil(x / y) for y > 0 (big.Int.DivMod is Euclidean: the
// quotient is the floor and the remainder is never negative when y > 0).
func ceilDiv(x, y *big.Int) *big.Int {
	q, r := new(big.Int).DivMod(x, y, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big1)
	}
	return q
}

// floorDiv is floor(x / y) for y > 0.
func floorDiv(x, y *big.Int) *big.Int {
	return new(big.Int).Div(x, y)
}

var big1 = big.NewInt(1)

// forward is the locked-SENDING arithmetic without the limits: the variable
// fee V = ceil(S × v), the converted amount N = S − F_s − V and the
// recipient's amount R = floor(N × m) − F_r. ok is N > 0 and R > 0.
func (c *corridor) forward(s *big.Int) (v, n, r *big.Int, ok bool) {
	v = ceilDiv(new(big.Int).Mul(s, c.from.varP), c.from.varQ)
	n = new(big.Int).Sub(s, c.fs)
	n.Sub(n, v)
	if n.Sign() <= 0 {
		return v, n, nil, false
	}
	r = floorDiv(new(big.Int).Mul(n, c.a), c.b)
	r.Sub(r, c.fr)
	return v, n, r, r.Sign() > 0
}

// delivers reports whether sending s delivers at least want.
func (c *corridor) delivers(s, want *big.Int) bool {
	_, _, r, ok := c.forward(s)
	return ok && r.Cmp(want) >= 0
}

// inverse is the least S that delivers at least want (> 0), the limits
// aside: the closed form of estimate, held to the forward formula.
func (c *corridor) inverse(want *big.Int) *big.Int {
	s := c.estimate(want)
	for !c.delivers(s, want) {
		s.Add(s, big1)
	}
	for prev := new(big.Int).Sub(s, big1); prev.Sign() > 0 && c.delivers(prev, want); prev.Sub(prev, big1) {
		s.Set(prev)
	}
	return s
}

// estimate is the least S that delivers at least want, in closed form. N
// must reach N_min = ceil((want + F_r) / m); S − ceil(S × v) is
// floor(S × (1 − v)), so the least S with N ≥ N_min is
// ceil((N_min + F_s) / (1 − v)) = ceil((N_min + F_s) × q / (q − p)) for
// v = p/q. The closed form is exact (the tests check that inverse never
// steps away from it); inverse holds it to the forward formula itself so
// that a slip in the algebra would cost a step, never a wrong quote.
func (c *corridor) estimate(want *big.Int) *big.Int {
	t := new(big.Int).Add(want, c.fr)
	nMin := ceilDiv(t.Mul(t, c.b), c.a)
	t = nMin.Add(nMin, c.fs)
	p, q := c.from.varP, c.from.varQ
	return ceilDiv(t.Mul(t, q), new(big.Int).Sub(q, p))
}

// fees are the fee figures at sending amount s with variable fee v:
// feesIncluded = F_s + V + ceil(F_r / m), fixedFees = F_s + ceil(F_r / m)
// (sending units) and receivingFees = ceil((F_s + V) × m) + F_r.
func (c *corridor) fees(v *big.Int) (feesIncluded, fixedFees, receivingFees *big.Int) {
	payout := ceilDiv(new(big.Int).Mul(c.fr, c.b), c.a)
	fixedFees = new(big.Int).Add(c.fs, payout)
	feesIncluded = new(big.Int).Add(fixedFees, v)
	service := new(big.Int).Add(c.fs, v)
	receivingFees = ceilDiv(service.Mul(service, c.a), c.b)
	receivingFees.Add(receivingFees, c.fr)
	return feesIncluded, fixedFees, receivingFees
}

func (c *corridor) rangeError() *AmountError {
	return &AmountError{Min: c.from.min, Max: c.from.max,
		Reason: fmt.Sprintf("the sending amount must be between %d and %d", c.from.min, c.from.max)}
}

func (c *corridor) tooSmall() *AmountError {
	least := c.from.min
	if c.least.IsInt64() && c.least.Int64() > least {
		least = c.least.Int64()
	} else if !c.least.IsInt64() {
		least = math.MaxInt64
	}
	return &AmountError{Min: least, Max: c.from.max,
		Reason: fmt.Sprintf("the sending amount is too small to cover the fees from %s to %s; the least is %d",
			c.from.pub.Code, c.to.pub.Code, least)}
}

func (c *corridor) tooLarge() *AmountError {
	return &AmountError{Min: c.from.min, Max: c.from.max,
		Reason: fmt.Sprintf("the amount is too large to quote from %s to %s", c.from.pub.Code, c.to.pub.Code)}
}

// int64s converts results that must all fit an int64.
func int64s(xs ...*big.Int) ([]int64, bool) {
	out := make([]int64, len(xs))
	for i, x := range xs {
		if !x.IsInt64() {
			return nil, false
		}
		out[i] = x.Int64()
	}
	return out, true
}

func (s *Source) currency(code, side string) (*currency, error) {
	c, ok := s.currencies[code]
	if !ok {
		return nil, fmt.Errorf("%w: %s currency %q", ErrUnknownCurrency, side, code)
	}
	return c, nil
}

// rail resolves a requested rail for a receiving currency: "" is the
// default (the first), or the no-rail payout when the currency has none.
func (s *Source) rail(to *currency, name string) (Rail, error) {
	if len(to.rails) == 0 {
		if name != "" {
			return Rail{}, fmt.Errorf("%w: %s takes no payment rail, got %s", ErrUnsupportedRail, to.pub.Code, name)
		}
		return s.noRail, nil
	}
	if name == "" {
		return to.rails[0], nil
	}
	for _, r := range to.rails {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, len(to.rails))
	for i, r := range to.rails {
		names[i] = r.Name
	}
	return Rail{}, fmt.Errorf("%w: %s does not pay out on %s (offered: %s)",
		ErrUnsupportedRail, to.pub.Code, name, strings.Join(names, ", "))
}

// Quote prices a request (see the package documentation for the
// arithmetic). Errors are [ErrUnknownCurrency], [ErrUnsupportedRail] or
// [ErrInvalidSide] wrapped with detail, or an [*AmountError].
func (s *Source) Quote(req Request) (Quote, error) {
	from, err := s.currency(req.Sending, "sending")
	if err != nil {
		return Quote{}, err
	}
	to, err := s.currency(req.Receiving, "receiving")
	if err != nil {
		return Quote{}, err
	}
	rail, err := s.rail(to, req.Rail)
	if err != nil {
		return Quote{}, err
	}
	c := s.corridors[[2]string{from.pub.Code, to.pub.Code}]
	if req.Side != SideSending && req.Side != SideReceiving {
		return Quote{}, fmt.Errorf("%w, got %q", ErrInvalidSide, req.Side)
	}
	if req.Amount <= 0 {
		return Quote{}, &AmountError{Min: from.min, Max: from.max,
			Reason: fmt.Sprintf("the amount must be positive, got %d", req.Amount)}
	}

	var sending, receiving, v *big.Int
	if req.Side == SideSending {
		if req.Amount < from.min || req.Amount > from.max {
			return Quote{}, c.rangeError()
		}
		sending = big.NewInt(req.Amount)
		var ok bool
		if v, _, receiving, ok = c.forward(sending); !ok {
			return Quote{}, c.tooSmall()
		}
	} else {
		receiving = big.NewInt(req.Amount)
		sending = c.inverse(receiving)
		if !sending.IsInt64() || sending.Int64() < from.min || sending.Int64() > from.max {
			e := c.rangeError()
			e.Reason += fmt.Sprintf("; delivering %d %s takes %s %s (smallest units)",
				req.Amount, to.pub.Code, sending, from.pub.Code)
			return Quote{}, e
		}
		v, _, _, _ = c.forward(sending)
	}
	feesIncluded, _, receivingFees := c.fees(v)
	n, ok := int64s(sending, receiving, feesIncluded, receivingFees, v)
	if !ok {
		return Quote{}, c.tooLarge()
	}
	return Quote{
		Sending:        from.pub,
		Receiving:      to.pub,
		Rail:           rail,
		TotalSending:   n[0],
		TotalReceiving: n[1],
		FeesIncluded:   n[2],
		ReceivingFees:  n[3],
		ExchangeRate:   c.exchangeRate,
		Details: RateDetails{
			CounterpartyMultiplier:   c.counterpartyMult,
			CounterpartyFixedFee:     to.payoutFee,
			ServiceMultiplier:        c.serviceMult,
			ServiceFixedFee:          from.fixedFee,
			ServiceVariableFeeRate:   c.varRate,
			ServiceVariableFeeAmount: n[4],
		},
		MinSending: from.min,
		MaxSending: from.max,
	}, nil
}

// DefaultSendingAmount is the sending amount of [Source.ExchangeRates] when
// none is given (moved into the sending currency's limits).
const DefaultSendingAmount = 10000

// ExchangeRates returns one row per receiving currency and rail, the
// currencies sorted by code and each one's rails in table order (a single
// row with an empty Rail for a currency without rails). An empty receiving
// list means every currency of the table, the sending one included. A
// sendingAmount of 0 means [DefaultSendingAmount], moved to the nearer limit
// when it falls outside the sending currency's limits (10000 COP cents, 100
// pesos, is below the COP minimum of 4000 pesos); any other amount
// outside them is an [*AmountError], as is one too small to cover a listed
// corridor's fees.
func (s *Source) ExchangeRates(sending string, receiving []string, sendingAmount int64) ([]ExchangeRate, error) {
	from, err := s.currency(sending, "sending")
	if err != nil {
		return nil, err
	}
	if sendingAmount == 0 {
		sendingAmount = min(max(DefaultSendingAmount, from.min), from.max)
	}
	if sendingAmount < from.min || sendingAmount > from.max {
		return nil, &AmountError{Min: from.min, Max: from.max,
			Reason: fmt.Sprintf("the sending amount must be between %d and %d", from.min, from.max)}
	}
	var codes []string
	if len(receiving) == 0 {
		for _, c := range s.sorted {
			codes = append(codes, c.Code)
		}
	} else {
		for _, code := range receiving {
			if _, err := s.currency(code, "receiving"); err != nil {
				return nil, err
			}
		}
		codes = slices.Clone(receiving)
		slices.Sort(codes)
		codes = slices.Compact(codes)
	}

	amount := big.NewInt(sendingAmount)
	var rows []ExchangeRate
	for _, code := range codes {
		to := s.currencies[code]
		c := s.corridors[[2]string{from.pub.Code, code}]
		v, _, r, ok := c.forward(amount)
		if !ok {
			return nil, c.tooSmall()
		}
		feesIncluded, fixedFees, _ := c.fees(v)
		n, ok := int64s(r, fixedFees, feesIncluded)
		if !ok {
			return nil, c.tooLarge()
		}
		row := ExchangeRate{
			Sending:         from.pub,
			Receiving:       to.pub,
			MinSending:      from.min,
			MaxSending:      from.max,
			SendingAmount:   sendingAmount,
			ReceivingAmount: n[0],
			ExchangeRate:    c.exchangeRate,
			FixedFees:       n[1],
			TotalFees:       n[2],
		}
		if len(to.rails) == 0 {
			rows = append(rows, row)
			continue
		}
		for _, rail := range to.rails {
			row.Rail = rail.Name
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// Equivalent converts amount (smallest units of from) into the smallest
// units of to at the corridor's multiplier, rounded down: what a threshold
// "or its equivalent" compares with. false when a currency is unknown or
// the result does not fit an int64.
func (s *Source) Equivalent(amount int64, from, to string) (int64, bool) {
	if from == to {
		return amount, true
	}
	c := s.corridors[[2]string{from, to}]
	if c == nil {
		return 0, false
	}
	v := new(big.Int).Mul(big.NewInt(amount), c.a)
	v.Quo(v, c.b)
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

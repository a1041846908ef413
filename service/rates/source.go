package rates

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed rates.json
var embedded []byte

// Currency is what a currency is, without its fees.
type Currency struct {
	Code, Name, Symbol string
	// Decimals is the number of smallest units per major unit as a power of
	// ten: 2 for USD (cents), 0 for UGX, 8 for BTC (satoshis).
	Decimals int
}

// Rail is a payment rail a receiving currency pays out on. The zero Name is
// the no-rail payout (a BTC Spark wallet), which behaves as an instant rail.
type Rail struct {
	Name    string
	Instant bool
	// QuoteTTL is how long a quote on this rail may be executed.
	QuoteTTL time.Duration
	// SettleAfter is how long the simulated network takes to settle a payment
	// on this rail; the service's settlement worker waits this long.
	SettleAfter time.Duration
}

// Source is a loaded rates table. It is read-only once loaded, so one Source
// serves any number of goroutines.
type Source struct {
	updatedAt  time.Time
	noRail     Rail
	rails      map[string]Rail
	currencies map[string]*currency
	sorted     []Currency
	corridors  map[[2]string]*corridor
}

// currency is a table currency with its figures as exact rationals.
type currency struct {
	pub Currency
	// Sending side.
	fixedFee     int64
	varP, varQ   *big.Int // serviceVariableFeeRate = varP/varQ, 0 ≤ varP < varQ
	varRate      *big.Rat
	min, max     int64
	serviceMult  *big.Rat // m_s with the spread
	serviceMult0 *big.Rat // m_s without the spread (domestic)
	// Receiving side.
	payoutFee         int64
	counterpartyMult  *big.Rat // m_c with the spread
	counterpartyMult0 *big.Rat // m_c without the spread (domestic)
	rails             []Rail
}

var (
	defaultOnce   sync.Once
	defaultSource *Source
)

// Default returns the Source of the embedded table. It is loaded once and
// shared (a Source is read-only). The embedded table is checked by the tests,
// so a broken one is a programming error and Default panics on it.
func Default() *Source {
	defaultOnce.Do(func() { defaultSource = mustLoad(embedded) })
	return defaultSource
}

func mustLoad(b []byte) *Source {
	s, err := Load(bytes.NewReader(b))
	if err != nil {
		panic("rates: the embedded table is broken: " + err.Error())
	}
	return s
}

// The JSON form of the table. Unknown fields are refused so that a misspelt
// fee in an operator's table is an error rather than a silent zero.
type tableJSON struct {
	Note       string         `json:"note"`
	UpdatedAt  string         `json:"updatedAt"`
	NoRail     *railJSON      `json:"noRail"`
	Rails      []railJSON     `json:"rails"`
	Currencies []currencyJSON `json:"currencies"`
}

type railJSON struct {
	Name        string `json:"name"`
	Instant     bool   `json:"instant"`
	QuoteTTL    string `json:"quoteTTL"`
	SettleAfter string `json:"settleAfter"`
}

type currencyJSON struct {
	Code                   string    `json:"code"`
	Name                   string    `json:"name"`
	Symbol                 string    `json:"symbol"`
	Decimals               *int      `json:"decimals"`
	USDPerUnit             string    `json:"usdPerUnit"`
	ServiceFixedFee        int64     `json:"serviceFixedFee"`
	ServiceVariableFeeRate string    `json:"serviceVariableFeeRate"`
	ServiceSpread          string    `json:"serviceSpread"`
	MinSending             int64     `json:"minSending"`
	MaxSending             int64     `json:"maxSending"`
	CounterpartyFixedFee   int64     `json:"counterpartyFixedFee"`
	CounterpartySpread     string    `json:"counterpartySpread"`
	Rails                  *[]string `json:"rails"`
}

var (
	codeRE    = regexp.MustCompile(`^[A-Z]{3}$`)
	railRE    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	decimalRE = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

// maxDecimals bounds a currency's decimals: 10^18 smallest units per major
// unit is already more than any currency uses (ETH's wei).
const maxDecimals = 18

// Load reads a rates table in the format of the embedded rates.json (see the
// package documentation) and checks it whole. The error names the first
// problem found: the currency or rail and the field.
func Load(r io.Reader) (*Source, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var t tableJSON
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("rates: reading the table: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("rates: reading the table: data after the table's JSON object")
	}

	s := &Source{
		rails:      map[string]Rail{},
		currencies: map[string]*currency{},
		corridors:  map[[2]string]*corridor{},
	}
	if t.UpdatedAt == "" {
		return nil, errors.New("rates: updatedAt is missing")
	}
	at, err := time.Parse(time.RFC3339, t.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("rates: updatedAt %q is not an RFC 3339 time", t.UpdatedAt)
	}
	s.updatedAt = at

	if t.NoRail == nil {
		return nil, errors.New("rates: noRail (the payout without a rail, e.g. BTC to a Spark wallet) is missing")
	}
	if t.NoRail.Name != "" {
		return nil, fmt.Errorf("rates: noRail must have no name, got %q", t.NoRail.Name)
	}
	if s.noRail, err = parseRail(*t.NoRail); err != nil {
		return nil, fmt.Errorf("rates: noRail: %w", err)
	}
	for i, rj := range t.Rails {
		if !railRE.MatchString(rj.Name) {
			return nil, fmt.Errorf("rates: rail %d: name %q is not upper-case letters, digits and underscores", i, rj.Name)
		}
		if _, dup := s.rails[rj.Name]; dup {
			return nil, fmt.Errorf("rates: rail %s is defined twice", rj.Name)
		}
		rail, err := parseRail(rj)
		if err != nil {
			return nil, fmt.Errorf("rates: rail %s: %w", rj.Name, err)
		}
		s.rails[rj.Name] = rail
	}

	if len(t.Currencies) == 0 {
		return nil, errors.New("rates: the table has no currencies")
	}
	for i, cj := range t.Currencies {
		if !codeRE.MatchString(cj.Code) {
			return nil, fmt.Errorf("rates: currency %d: code %q is not three upper-case letters", i, cj.Code)
		}
		if _, dup := s.currencies[cj.Code]; dup {
			return nil, fmt.Errorf("rates: currency %s is defined twice", cj.Code)
		}
		c, err := s.parseCurrency(cj)
		if err != nil {
			return nil, fmt.Errorf("rates: currency %s: %w", cj.Code, err)
		}
		s.currencies[cj.Code] = c
		s.sorted = append(s.sorted, c.pub)
	}
	slices.SortFunc(s.sorted, func(a, b Currency) int { return strings.Compare(a.Code, b.Code) })
	for _, from := range s.currencies {
		for _, to := range s.currencies {
			s.corridors[[2]string{from.pub.Code, to.pub.Code}] = newCorridor(from, to)
		}
	}
	return s, nil
}

func parseRail(rj railJSON) (Rail, error) {
	ttl, err := parseDuration("quoteTTL", rj.QuoteTTL)
	if err != nil {
		return Rail{}, err
	}
	settle, err := parseDuration("settleAfter", rj.SettleAfter)
	if err != nil {
		return Rail{}, err
	}
	return Rail{Name: rj.Name, Instant: rj.Instant, QuoteTTL: ttl, SettleAfter: settle}, nil
}

func parseDuration(field, v string) (time.Duration, error) {
	if v == "" {
		return 0, fmt.Errorf("%s is missing", field)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration such as \"3m\" or \"20s\"", field, v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s %q must be positive", field, v)
	}
	return d, nil
}

// parseDecimal reads an exact decimal string ("0.0585"). Fractions ("1/3"),
// exponents and signs are refused: the table is written by people and
// should read as the numbers they mean.
func parseDecimal(field, v string) (*big.Rat, error) {
	if v == "" {
		return nil, fmt.Errorf("%s is missing", field)
	}
	if len(v) > 40 || !decimalRE.MatchString(v) {
		return nil, fmt.Errorf("%s %q is not a decimal string such as \"0.0585\"", field, v)
	}
	x, ok := new(big.Rat).SetString(v)
	if !ok {
		return nil, fmt.Errorf("%s %q is not a decimal string such as \"0.0585\"", field, v)
	}
	return x, nil
}

// parseFraction reads a decimal in [0, 1): a fee rate or a spread.
func parseFraction(field, v string) (*big.Rat, error) {
	x, err := parseDecimal(field, v)
	if err != nil {
		return nil, err
	}
	if x.Cmp(one) >= 0 {
		return nil, fmt.Errorf("%s %q must be at least 0 and less than 1", field, v)
	}
	return x, nil
}

var one = big.NewRat(1, 1)

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

var microPerUSD = big.NewRat(1_000_000, 1)

func (s *Source) parseCurrency(cj currencyJSON) (*currency, error) {
	if cj.Name == "" {
		return nil, errors.New("name is missing")
	}
	if cj.Symbol == "" {
		return nil, errors.New("symbol is missing")
	}
	if cj.Decimals == nil {
		return nil, errors.New("decimals is missing")
	}
	d := *cj.Decimals
	if d < 0 || d > maxDecimals {
		return nil, fmt.Errorf("decimals %d must be between 0 and %d", d, maxDecimals)
	}
	usd, err := parseDecimal("usdPerUnit", cj.USDPerUnit)
	if err != nil {
		return nil, err
	}
	if usd.Sign() <= 0 {
		return nil, fmt.Errorf("usdPerUnit %q must be positive", cj.USDPerUnit)
	}
	varRate, err := parseFraction("serviceVariableFeeRate", cj.ServiceVariableFeeRate)
	if err != nil {
		return nil, err
	}
	serviceSpread, err := parseFraction("serviceSpread", cj.ServiceSpread)
	if err != nil {
		return nil, err
	}
	cpSpread, err := parseFraction("counterpartySpread", cj.CounterpartySpread)
	if err != nil {
		return nil, err
	}
	if cj.ServiceFixedFee < 0 {
		return nil, fmt.Errorf("serviceFixedFee %d must not be negative", cj.ServiceFixedFee)
	}
	if cj.CounterpartyFixedFee < 0 {
		return nil, fmt.Errorf("counterpartyFixedFee %d must not be negative", cj.CounterpartyFixedFee)
	}
	if cj.MinSending < 1 {
		return nil, fmt.Errorf("minSending %d must be at least 1", cj.MinSending)
	}
	if cj.MaxSending < cj.MinSending {
		return nil, fmt.Errorf("maxSending %d must not be less than minSending %d", cj.MaxSending, cj.MinSending)
	}
	if cj.Rails == nil {
		return nil, errors.New("rails is missing (an empty list means the destination takes no rail)")
	}
	rails := make([]Rail, 0, len(*cj.Rails))
	for _, name := range *cj.Rails {
		rail, ok := s.rails[name]
		if !ok {
			return nil, fmt.Errorf("rail %q is not defined in the table's rails", name)
		}
		if slices.ContainsFunc(rails, func(r Rail) bool { return r.Name == name }) {
			return nil, fmt.Errorf("rail %s is listed twice", name)
		}
		rails = append(rails, rail)
	}

	unit := new(big.Rat).SetInt(pow10(d)) // smallest units per major unit
	// m_s = usdPerUnit × 10^6 / 10^d, then × (1 − spread).
	ms0 := new(big.Rat).Mul(usd, microPerUSD)
	ms0.Quo(ms0, unit)
	ms := new(big.Rat).Mul(ms0, new(big.Rat).Sub(one, serviceSpread))
	// m_c = 10^d / (usdPerUnit × 10^6), then × (1 − spread).
	mc0 := new(big.Rat).Inv(ms0)
	mc := new(big.Rat).Mul(mc0, new(big.Rat).Sub(one, cpSpread))

	return &currency{
		pub:               Currency{Code: cj.Code, Name: cj.Name, Symbol: cj.Symbol, Decimals: d},
		fixedFee:          cj.ServiceFixedFee,
		varP:              new(big.Int).Set(varRate.Num()),
		varQ:              new(big.Int).Set(varRate.Denom()),
		varRate:           varRate,
		min:               cj.MinSending,
		max:               cj.MaxSending,
		serviceMult:       ms,
		serviceMult0:      ms0,
		payoutFee:         cj.CounterpartyFixedFee,
		counterpartyMult:  mc,
		counterpartyMult0: mc0,
		rails:             rails,
	}, nil
}

// Currency returns a currency of the table by its code (exact, upper case).
func (s *Source) Currency(code string) (Currency, bool) {
	c, ok := s.currencies[code]
	if !ok {
		return Currency{}, false
	}
	return c.pub, true
}

// Currencies returns every currency of the table, sorted by code, in a fresh
// slice.
func (s *Source) Currencies() []Currency {
	return slices.Clone(s.sorted)
}

// Rails returns the rails a receiving currency pays out on, the default
// first, in a fresh slice. A currency whose destination takes no rail (BTC)
// gives an empty slice and true; an unknown currency gives nil and false.
func (s *Source) Rails(receiving string) ([]Rail, bool) {
	c, ok := s.currencies[receiving]
	if !ok {
		return nil, false
	}
	return slices.Clone(c.rails), true
}

// Rail returns a rail of the table by name. The empty name is the no-rail
// payout (BTC to a Spark wallet), which behaves as an instant rail.
func (s *Source) Rail(name string) (Rail, bool) {
	if name == "" {
		return s.noRail, true
	}
	r, ok := s.rails[name]
	return r, ok
}

// UpdatedAt is the table's updatedAt: the day its reference rates describe.
func (s *Source) UpdatedAt() time.Time {
	return s.updatedAt
}

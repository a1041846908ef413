package rates

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQuoteTable checks quotes computed by hand from the embedded table.
//
// The corridors' multipliers (m = m_s × m_c, smallest receiving units per
// smallest sending unit):
//
//	USD→USD  m = 1 (domestic: no spread)
//	USD→MXN  m_s = 1 × 10^6 / 10^2 = 10000; m_c = 10^2 / (0.0545 × 10^6) × 0.995
//	         m = 10000 × 99.5 / 54500 = 1990/109 ≈ 18.2569
//	USD→KES  m = 10000 × 10^2 / (0.00774 × 10^6) × 0.985 = 49250/387 ≈ 127.261
//	USD→XOF  m = 10000 × 10^0 / (0.001776 × 10^6) × 0.985 = 4925/888 ≈ 5.54617
//	USD→BTC  m = 10000 × 10^8 / (100000 × 10^6) × 0.997 = 997/100
//	EUR→USD  m_s = 1.165 × 10^6 / 10^2 × 0.998 = 11626.7; m_c = 10^2 / 10^6
//	         m = 1.16267
//
// USD sends with F_s = 25 and v = 0.003; F_r is 10 (USD), 500 (MXN), 1500
// (KES), 100 (XOF), 10 (BTC).
func TestQuoteTable(t *testing.T) {
	src := Default()
	tests := []struct {
		name            string
		req             Request
		rail            string
		sending, recv   int64
		variable        int64
		fees, recvFees  int64
		rate            float64
		serviceMult, cp float64
	}{
		{
			// V = ceil(10000 × 0.003) = 30; N = 10000 − 25 − 30 = 9945;
			// R = floor(9945 × 1) − 10 = 9935.
			// feesIncluded = 25 + 30 + ceil(10 / 1) = 65;
			// receivingFees = ceil(55 × 1) + 10 = 65.
			name: "USD→USD sending", req: Request{Sending: "USD", Receiving: "USD", Side: SideSending, Amount: 10000},
			rail: "ACH", sending: 10000, recv: 9935, variable: 30, fees: 65, recvFees: 65, rate: 1,
			serviceMult: 10000, cp: 0.0001,
		},
		{
			// N_min = ceil((10000 + 10) / 1) = 10010; S = ceil((10010 + 25) /
			// 0.997) = ceil(10065.19…) = 10066. Check: V = ceil(30.198) = 31,
			// N = 10066 − 25 − 31 = 10010, R = 10000; and S = 10065 gives
			// V = 31, N = 10009, R = 9999 < 10000, so 10066 is the least.
			name: "USD→USD receiving", req: Request{Sending: "USD", Receiving: "USD", Side: SideReceiving, Amount: 10000, Rail: "RTP"},
			rail: "RTP", sending: 10066, recv: 10000, variable: 31, fees: 66, recvFees: 66, rate: 1,
			serviceMult: 10000, cp: 0.0001,
		},
		{
			// V = 30; N = 9945; R = floor(9945 × 1990/109) − 500
			// = floor(19790550 / 109) − 500 = floor(181564.68…) − 500 = 181064.
			// feesIncluded = 25 + 30 + ceil(500 × 109/1990) = 55 + ceil(27.38…) = 83;
			// receivingFees = ceil(55 × 1990/109) + 500 = ceil(1004.13…) + 500 = 1505;
			// exchangeRate = 10^2 / (10^2 × 1990/109) = 109/1990 ≈ 0.0547739.
			name: "USD→MXN sending", req: Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 10000},
			rail: "SPEI", sending: 10000, recv: 181064, variable: 30, fees: 83, recvFees: 1505, rate: 109.0 / 1990,
			serviceMult: 10000, cp: 0.995 / 545,
		},
		{
			// The forward result above, locked: the same sending amount.
			name: "USD→MXN receiving round trip", req: Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: 181064},
			rail: "SPEI", sending: 10000, recv: 181064, variable: 30, fees: 83, recvFees: 1505, rate: 109.0 / 1990,
			serviceMult: 10000, cp: 0.995 / 545,
		},
		{
			// N_min = ceil((100000 + 500) × 109/1990) = ceil(5504.77…) = 5505;
			// S = ceil((5505 + 25) / 0.997) = ceil(5546.64…) = 5547.
			// Check: V = ceil(16.641) = 17, N = 5505, R = floor(100504.1…) − 500
			// = 100004 ≥ 100000; S = 5546: V = 17, N = 5504,
			// R = floor(100485.8…) − 500 = 99985 < 100000.
			// feesIncluded = 25 + 17 + 28 = 70; receivingFees = ceil(42 × 1990/109) + 500
			// = ceil(766.78…) + 500 = 1267.
			name: "USD→MXN receiving", req: Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: 100000},
			rail: "SPEI", sending: 5547, recv: 100000, variable: 17, fees: 70, recvFees: 1267, rate: 109.0 / 1990,
			serviceMult: 10000, cp: 0.995 / 545,
		},
		{
			// R = floor(9945 × 49250/387) − 1500 = floor(1265610.4…) − 1500 = 1264110.
			name: "USD→KES sending", req: Request{Sending: "USD", Receiving: "KES", Side: SideSending, Amount: 10000},
			rail: "MOBILE_MONEY", sending: 10000, recv: 1264110, variable: 30, fees: 67, recvFees: 8500, rate: 387.0 / 49250,
			serviceMult: 10000, cp: 0.985 / 77.4,
		},
		{
			name: "USD→KES receiving", req: Request{Sending: "USD", Receiving: "KES", Side: SideReceiving, Amount: 1000000},
			rail: "MOBILE_MONEY", sending: 7919, recv: 1000000, variable: 24, fees: 61, recvFees: 7736, rate: 387.0 / 49250,
			serviceMult: 10000, cp: 0.985 / 77.4,
		},
		{
			// R = floor(9945 × 4925/888) − 100 = floor(55156.6…) − 100 = 55056 (francs: 0 decimals).
			// exchangeRate = 10^0 / (10^2 × 4925/888) = 888/492500.
			name: "USD→XOF sending", req: Request{Sending: "USD", Receiving: "XOF", Side: SideSending, Amount: 10000},
			rail: "MOBILE_MONEY", sending: 10000, recv: 55056, variable: 30, fees: 74, recvFees: 406, rate: 888.0 / 492500,
			serviceMult: 10000, cp: 0.985 / 1776,
		},
		{
			name: "USD→XOF receiving", req: Request{Sending: "USD", Receiving: "XOF", Side: SideReceiving, Amount: 50000},
			rail: "MOBILE_MONEY", sending: 9087, recv: 50000, variable: 28, fees: 72, recvFees: 394, rate: 888.0 / 492500,
			serviceMult: 10000, cp: 0.985 / 1776,
		},
		{
			// R = floor(9945 × 9.97) − 10 = floor(99151.65) − 10 = 99141 sats.
			// exchangeRate = 10^8 / (10^2 × 9.97) ≈ 100300.9 dollars per bitcoin.
			name: "USD→BTC sending", req: Request{Sending: "USD", Receiving: "BTC", Side: SideSending, Amount: 10000},
			rail: "", sending: 10000, recv: 99141, variable: 30, fees: 57, recvFees: 559, rate: 1e8 / 997,
			serviceMult: 10000, cp: 0.000997,
		},
		{
			name: "USD→BTC receiving", req: Request{Sending: "USD", Receiving: "BTC", Side: SideReceiving, Amount: 100000},
			rail: "", sending: 10088, recv: 100000, variable: 31, fees: 58, recvFees: 569, rate: 1e8 / 997,
			serviceMult: 10000, cp: 0.000997,
		},
		{
			// R = floor(9945 × 1.16267) − 10 = floor(11562.75…) − 10 = 11552.
			// feesIncluded = 25 + 30 + ceil(10 / 1.16267) = 55 + 9 = 64;
			// receivingFees = ceil(55 × 1.16267) + 10 = ceil(63.95) + 10 = 74.
			name: "EUR→USD sending", req: Request{Sending: "EUR", Receiving: "USD", Side: SideSending, Amount: 10000},
			rail: "ACH", sending: 10000, recv: 11552, variable: 30, fees: 64, recvFees: 74, rate: 1 / 1.16267,
			serviceMult: 11626.7, cp: 0.0001,
		},
		{
			name: "EUR→USD receiving", req: Request{Sending: "EUR", Receiving: "USD", Side: SideReceiving, Amount: 10000, Rail: "WIRE"},
			rail: "WIRE", sending: 8661, recv: 10000, variable: 26, fees: 60, recvFees: 70, rate: 1 / 1.16267,
			serviceMult: 11626.7, cp: 0.0001,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := src.Quote(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if q.Sending.Code != tt.req.Sending || q.Receiving.Code != tt.req.Receiving || q.Rail.Name != tt.rail {
				t.Errorf("corridor %s→%s on %q", q.Sending.Code, q.Receiving.Code, q.Rail.Name)
			}
			if q.TotalSending != tt.sending || q.TotalReceiving != tt.recv {
				t.Errorf("sending %d receiving %d, want %d %d", q.TotalSending, q.TotalReceiving, tt.sending, tt.recv)
			}
			if q.Details.ServiceVariableFeeAmount != tt.variable || q.FeesIncluded != tt.fees || q.ReceivingFees != tt.recvFees {
				t.Errorf("variable %d feesIncluded %d receivingFees %d, want %d %d %d",
					q.Details.ServiceVariableFeeAmount, q.FeesIncluded, q.ReceivingFees, tt.variable, tt.fees, tt.recvFees)
			}
			if !near(q.ExchangeRate, tt.rate) || !near(q.Details.ServiceMultiplier, tt.serviceMult) || !near(q.Details.CounterpartyMultiplier, tt.cp) {
				t.Errorf("rate %v multipliers %v %v, want %v %v %v", q.ExchangeRate,
					q.Details.ServiceMultiplier, q.Details.CounterpartyMultiplier, tt.rate, tt.serviceMult, tt.cp)
			}
			from, _ := src.Currency(tt.req.Sending)
			if q.MinSending != c(src, tt.req.Sending).min || q.MaxSending != c(src, tt.req.Sending).max || q.Sending != from {
				t.Errorf("limits %d..%d, currency %+v", q.MinSending, q.MaxSending, q.Sending)
			}
			if q.Details.ServiceFixedFee != c(src, tt.req.Sending).fixedFee || q.Details.CounterpartyFixedFee != c(src, tt.req.Receiving).payoutFee {
				t.Errorf("fixed fees %d %d", q.Details.ServiceFixedFee, q.Details.CounterpartyFixedFee)
			}
			if rate := c(src, tt.req.Sending).varRate; !near(q.Details.ServiceVariableFeeRate, ratFloat(rate)) {
				t.Errorf("variable fee rate %v", q.Details.ServiceVariableFeeRate)
			}
		})
	}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

func c(s *Source, code string) *currency { return s.currencies[code] }

// TestDomesticIsExact: a domestic corridor has no spread, m is exactly 1 and
// the rate is 1.
func TestDomesticIsExact(t *testing.T) {
	src := Default()
	for _, cur := range src.Currencies() {
		k := src.corridors[[2]string{cur.Code, cur.Code}]
		if k.a.Cmp(big1) != 0 || k.b.Cmp(big1) != 0 || k.exchangeRate != 1 {
			t.Errorf("%s: m = %v/%v, rate %v", cur.Code, k.a, k.b, k.exchangeRate)
		}
	}
}

func TestQuoteErrors(t *testing.T) {
	src := Default()
	tests := []struct {
		name string
		req  Request
		is   error
		msg  string
	}{
		{"unknown sending", Request{Sending: "XXX", Receiving: "USD", Side: SideSending, Amount: 1000}, ErrUnknownCurrency, `sending currency "XXX"`},
		{"unknown receiving", Request{Sending: "USD", Receiving: "usd", Side: SideSending, Amount: 1000}, ErrUnknownCurrency, `receiving currency "usd"`},
		{"rail not offered", Request{Sending: "USD", Receiving: "EUR", Rail: "ACH", Side: SideSending, Amount: 1000}, ErrUnsupportedRail, "EUR does not pay out on ACH (offered: SEPA_INSTANT, SEPA)"},
		{"rail unknown", Request{Sending: "USD", Receiving: "MXN", Rail: "SWIFT", Side: SideSending, Amount: 1000}, ErrUnsupportedRail, "(offered: SPEI)"},
		{"rail for BTC", Request{Sending: "USD", Receiving: "BTC", Rail: "ACH", Side: SideSending, Amount: 1000}, ErrUnsupportedRail, "BTC takes no payment rail"},
		{"no side", Request{Sending: "USD", Receiving: "MXN", Amount: 1000}, ErrInvalidSide, `got ""`},
		{"bad side", Request{Sending: "USD", Receiving: "MXN", Side: "sending", Amount: 1000}, ErrInvalidSide, `got "sending"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := src.Quote(tt.req)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want %v with %q", err, tt.is, tt.msg)
			}
		})
	}

	amounts := []struct {
		name     string
		req      Request
		min, max int64
		msg      string
	}{
		{"zero", Request{Sending: "USD", Receiving: "MXN", Side: SideSending}, 100, 10000000, "the amount must be positive, got 0"},
		{"negative", Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: -5}, 100, 10000000, "must be positive"},
		{"below min", Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 99}, 100, 10000000, "the sending amount must be between 100 and 10000000"},
		{"above max", Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 10000001}, 100, 10000000, "the sending amount must be between 100 and 10000000"},
		{"max int64", Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: math.MaxInt64}, 100, 10000000, "between 100 and 10000000"},
		// 1 centavo costs 54 cents: N_min = ceil((1 + 500) × 109/1990) = 28,
		// S = ceil((28 + 25) / 0.997) = 54, under the 1 dollar minimum.
		{"receiving below min", Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: 1}, 100, 10000000, "the sending amount must be between 100 and 10000000; delivering 1 MXN takes 54 USD"},
		{"receiving above max", Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: 9e15}, 100, 10000000, "between 100 and 10000000; delivering 9000000000000000 MXN"},
		{"receiving max int64", Request{Sending: "BTC", Receiving: "UGX", Side: SideReceiving, Amount: math.MaxInt64}, 1000, 100000000, "between 1000 and 100000000"},
	}
	for _, tt := range amounts {
		t.Run(tt.name, func(t *testing.T) {
			_, err := src.Quote(tt.req)
			var ae *AmountError
			if !errors.As(err, &ae) || ae.Min != tt.min || ae.Max != tt.max || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %#v, want an AmountError %d..%d with %q", err, tt.min, tt.max, tt.msg)
			}
		})
	}
}

// TestTooSmall uses a table whose fees exceed a minimum-sized payment.
func TestTooSmall(t *testing.T) {
	src := loadWith(t, func(tab map[string]any) {
		cur(tab, "MXN")["counterpartyFixedFee"] = 2000 // 20 pesos, about $1.09
	})
	// 100 cents: V = 1, N = 74, floor(74 × 1990/109) = 1351 < 2000.
	_, err := src.Quote(Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 100})
	var ae *AmountError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v", err)
	}
	// The least S: N_min = ceil(2001 × 109/1990) = 110, S = ceil(135/0.997) = 136.
	if ae.Min != 136 || ae.Max != 10000000 || ae.Error() != "the sending amount is too small to cover the fees from USD to MXN; the least is 136" {
		t.Errorf("%#v", ae)
	}
	if q, err := src.Quote(Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 136}); err != nil || q.TotalReceiving != 8 {
		t.Errorf("at the least: %+v %v", q, err)
	}
	if _, err := src.Quote(Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 135}); !errors.As(err, &ae) {
		t.Errorf("below the least: %v", err)
	}
	// Where the fees swallow the whole converted amount (N ≤ 0).
	src = loadWith(t, func(tab map[string]any) { cur(tab, "USD")["serviceFixedFee"] = 150 })
	if _, err := src.Quote(Request{Sending: "USD", Receiving: "EUR", Side: SideSending, Amount: 120}); !errors.As(err, &ae) || ae.Min <= 150 {
		t.Errorf("N ≤ 0: %v", err)
	}
	if _, err := src.ExchangeRates("USD", nil, 120); !errors.As(err, &ae) || !strings.Contains(err.Error(), "too small") {
		t.Errorf("exchange rates, N ≤ 0: %v", err)
	}
}

func TestAmountErrorMessage(t *testing.T) {
	if got := (&AmountError{Min: 100, Max: 10000000}).Error(); got != "the sending amount must be between 100 and 10000000" {
		t.Error(got)
	}
}

// TestDefaultTable checks the embedded table against what the service's
// external accounts need.
func TestDefaultTable(t *testing.T) {
	src := Default()
	if src != Default() {
		t.Error("Default loads more than once")
	}
	if want := time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC); !src.UpdatedAt().Equal(want) {
		t.Errorf("updatedAt %v", src.UpdatedAt())
	}
	wantRails := map[string][]string{
		"USD": {"ACH", "WIRE", "RTP", "FEDNOW", "BANK_TRANSFER", "MOBILE_MONEY"}, "EUR": {"SEPA_INSTANT", "SEPA"}, "GBP": {"FASTER_PAYMENTS"},
		"MXN": {"SPEI"}, "BRL": {"PIX"}, "COP": {"BANK_TRANSFER", "MOBILE_MONEY"}, "INR": {"UPI"},
		"PHP": {"INSTAPAY", "PESONET", "BANK_TRANSFER"}, "NGN": {"BANK_TRANSFER"}, "ZAR": {"BANK_TRANSFER"}, "CAD": {"BANK_TRANSFER"},
		"AED": {"BANK_TRANSFER"}, "KES": {"MOBILE_MONEY"}, "TZS": {"MOBILE_MONEY"}, "ZMW": {"MOBILE_MONEY"},
		"RWF": {"MOBILE_MONEY"}, "MWK": {"MOBILE_MONEY"}, "UGX": {"MOBILE_MONEY"}, "XOF": {"MOBILE_MONEY"}, "BTC": {},
	}
	wantDecimals := map[string]int{"RWF": 0, "UGX": 0, "XOF": 0, "BTC": 8}
	all := src.Currencies()
	if len(all) != len(wantRails) {
		t.Errorf("%d currencies, want %d", len(all), len(wantRails))
	}
	if !slices.IsSortedFunc(all, func(a, b Currency) int { return strings.Compare(a.Code, b.Code) }) {
		t.Error("Currencies is not sorted")
	}
	for code, want := range wantRails {
		cur, ok := src.Currency(code)
		d, special := wantDecimals[code]
		if !special {
			d = 2
		}
		if !ok || cur.Code != code || cur.Name == "" || cur.Symbol == "" || cur.Decimals != d {
			t.Errorf("%s: %+v %v", code, cur, ok)
		}
		rails, ok := src.Rails(code)
		var names []string
		for _, r := range rails {
			names = append(names, r.Name)
		}
		if !ok || rails == nil || len(names) != len(want) || !slices.Equal(names, want) {
			t.Errorf("%s rails %v %v, want %v", code, names, ok, want)
		}
	}
	instant := []string{"RTP", "FEDNOW", "SEPA_INSTANT", "FASTER_PAYMENTS", "SPEI", "PIX", "UPI", "INSTAPAY", "MOBILE_MONEY", ""}
	standard := []string{"ACH", "WIRE", "SEPA", "PESONET", "BANK_TRANSFER"}
	for _, name := range instant {
		if r, ok := src.Rail(name); !ok || r.Name != name || !r.Instant || r.QuoteTTL != 3*time.Minute || r.SettleAfter != 2*time.Second {
			t.Errorf("rail %q: %+v %v", name, r, ok)
		}
	}
	for _, name := range standard {
		if r, ok := src.Rail(name); !ok || r.Name != name || r.Instant || r.QuoteTTL != 15*time.Minute || r.SettleAfter != 20*time.Second {
			t.Errorf("rail %q: %+v %v", name, r, ok)
		}
	}
	if _, ok := src.Rail("SWIFT"); ok {
		t.Error("SWIFT is a rail")
	}
	if _, ok := src.Currency("XXX"); ok {
		t.Error("XXX is a currency")
	}
	if r, ok := src.Rails("XXX"); ok || r != nil {
		t.Error("XXX has rails")
	}
	// The accessors hand out copies.
	all[0].Code = "ZZZ"
	if src.Currencies()[0].Code == "ZZZ" {
		t.Error("Currencies shares its slice")
	}
	r, _ := src.Rails("USD")
	r[0].Name = "X"
	if r, _ := src.Rails("USD"); r[0].Name != "ACH" {
		t.Error("Rails shares its slice")
	}
}

// TestLimitsCoverFees: in the embedded table every corridor quotes both the
// sending currency's minimum and its maximum, so the minimum is never eaten
// by fees and the maximum never overflows. Locking the receiving amount that
// the maximum delivers costs at most the maximum; the one the minimum
// delivers may cost less than the minimum (rounding down leaves slack), and
// is then refused, since the limits apply to the sending amount.
func TestLimitsCoverFees(t *testing.T) {
	src := Default()
	for _, from := range src.Currencies() {
		for _, to := range src.Currencies() {
			f := c(src, from.Code)
			for _, amount := range []int64{f.min, f.max} {
				q, err := src.Quote(Request{Sending: from.Code, Receiving: to.Code, Side: SideSending, Amount: amount})
				if err != nil {
					t.Errorf("%s→%s at %d: %v", from.Code, to.Code, amount, err)
					continue
				}
				back, err := src.Quote(Request{Sending: from.Code, Receiving: to.Code, Side: SideReceiving, Amount: q.TotalReceiving})
				var ae *AmountError
				switch {
				case err == nil && back.TotalSending <= amount:
				case amount == f.min && errors.As(err, &ae):
				default:
					t.Errorf("%s→%s receiving %d: %+v %v", from.Code, to.Code, q.TotalReceiving, back, err)
				}
			}
		}
	}
}

func TestExchangeRates(t *testing.T) {
	src := Default()
	rows, err := src.ExchangeRates("USD", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, cur := range src.Currencies() {
		rails, _ := src.Rails(cur.Code)
		want += max(1, len(rails))
	}
	if len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	var keys []string
	for i, row := range rows {
		keys = append(keys, row.Receiving.Code+"/"+row.Rail)
		if i > 0 && rows[i-1].Receiving.Code > row.Receiving.Code {
			t.Errorf("row %d %s after %s", i, row.Receiving.Code, rows[i-1].Receiving.Code)
		}
		q, err := src.Quote(Request{Sending: "USD", Receiving: row.Receiving.Code, Rail: row.Rail, Side: SideSending, Amount: 10000})
		if err != nil {
			t.Fatal(err)
		}
		if row.Sending.Code != "USD" || row.SendingAmount != 10000 || row.ReceivingAmount != q.TotalReceiving ||
			row.ExchangeRate != q.ExchangeRate || row.TotalFees != q.FeesIncluded || row.MinSending != 100 || row.MaxSending != 10000000 ||
			row.FixedFees != q.FeesIncluded-q.Details.ServiceVariableFeeAmount {
			t.Errorf("row %+v, quote %+v", row, q)
		}
	}
	for _, k := range []string{"BTC/", "COP/BANK_TRANSFER", "COP/MOBILE_MONEY", "USD/ACH", "USD/FEDNOW"} {
		if !slices.Contains(keys, k) {
			t.Errorf("no row %s in %v", k, keys)
		}
	}
	if i, j := slices.Index(keys, "COP/BANK_TRANSFER"), slices.Index(keys, "COP/MOBILE_MONEY"); i+1 != j {
		t.Errorf("COP rails out of table order: %v", keys)
	}
	// USD→MXN at 10000, as in TestQuoteTable: fixed fees 25 + 28.
	if i := slices.Index(keys, "MXN/SPEI"); rows[i].ReceivingAmount != 181064 || rows[i].FixedFees != 53 || rows[i].TotalFees != 83 {
		t.Errorf("MXN row %+v", rows[i])
	}

	// A chosen list: sorted, duplicates dropped.
	rows, err = src.ExchangeRates("EUR", []string{"PHP", "GBP", "PHP"}, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Receiving.Code != "GBP" || rows[1].Rail != "INSTAPAY" || rows[2].Rail != "PESONET" || rows[3].Rail != "BANK_TRANSFER" || rows[0].SendingAmount != 5000 {
		t.Errorf("rows %+v", rows)
	}

	// The default amount moves into the sending currency's limits.
	rows, err = src.ExchangeRates("COP", []string{"USD"}, 0)
	if err != nil || rows[0].SendingAmount != 400000 {
		t.Errorf("COP default %+v %v", rows, err)
	}

	if _, err := src.ExchangeRates("XXX", nil, 0); !errors.Is(err, ErrUnknownCurrency) {
		t.Errorf("unknown sending: %v", err)
	}
	if _, err := src.ExchangeRates("USD", []string{"MXN", "XXX"}, 0); !errors.Is(err, ErrUnknownCurrency) {
		t.Errorf("unknown receiving: %v", err)
	}
	var ae *AmountError
	for _, amount := range []int64{-1, 99, 10000001, math.MaxInt64} {
		if _, err := src.ExchangeRates("USD", nil, amount); !errors.As(err, &ae) || ae.Min != 100 || ae.Max != 10000000 {
			t.Errorf("amount %d: %v", amount, err)
		}
	}
}

func BenchmarkQuoteSending(b *testing.B) {
	src := Default()
	req := Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 123456}
	for b.Loop() {
		if _, err := src.Quote(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQuoteReceiving(b *testing.B) {
	src := Default()
	req := Request{Sending: "USD", Receiving: "MXN", Side: SideReceiving, Amount: 2000000}
	for b.Loop() {
		if _, err := src.Quote(req); err != nil {
			b.Fatal(err)
		}
	}
}

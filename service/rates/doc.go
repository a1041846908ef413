// Package rates is the rates source of the payments service: the exchange
// rates, payment rails and fee components of every corridor (a sending
// currency and a receiving currency), and the exact integer arithmetic that
// turns a locked amount into a quote.
//
// # Data
//
// The table is JSON. [Default] loads the one embedded in the binary
// (rates.json); [Load] reads an operator-supplied replacement in the same
// format and refuses anything it does not understand (unknown fields, a rail a
// currency names that the table does not define, a rate that is not positive, a
// fee rate or spread outside [0, 1), a negative fee, decimals outside 0..18).
// The embedded rates are fixed mid-market reference rates chosen by hand, not a
// live feed: there is no market-data provider behind this service, and
// [Source.UpdatedAt] says which day they describe.
//
// Every currency carries three groups of figures:
//
//   - what it is: code, name, symbol, decimals (smallest units per major
//     unit as a power of ten) and usdPerUnit, the US dollars one major unit is
//     worth, as an exact decimal string;
//   - as a sending currency: serviceFixedFee (smallest units of it),
//     serviceVariableFeeRate and serviceSpread (decimal strings), and the
//     minSending and maxSending limits (smallest units);
//   - as a receiving currency: counterpartyFixedFee (smallest units of it),
//     counterpartySpread, and the rails it pays out on, first the default. An
//     empty list (BTC, paid to a Spark wallet) means the destination takes no
//     rail; such a payout behaves as an instant rail.
//
// A rail has a quote lifetime (quoteTTL) and a settleAfter, the time the
// service's settlement worker lets pass before it settles a payment on that
// rail. There is no bank network behind this service; settleAfter is what
// the simulated network takes. Instant rails (RTP, FEDNOW, SEPA_INSTANT,
// FASTER_PAYMENTS, SPEI, PIX, UPI, INSTAPAY, MOBILE_MONEY and the no-rail
// payout) quote for 3 minutes and settle after 2 seconds; the others (ACH,
// WIRE, SEPA, PESONET, BANK_TRANSFER) quote for 15 minutes and settle after 20
// seconds.
//
// # Arithmetic
//
// Amounts are int64 counts of the smallest unit of their currency. Nothing on
// an amount is computed in floating point: the table's decimal strings become
// exact rationals (math/big), every product is exact, and each result is
// rounded once, explicitly. The float64 fields of a [Quote] and of an
// [ExchangeRate] are for display only and are converted from the exact
// rationals at the end.
//
// Corridors meet at a pivot unit, one millionth of a US dollar (micro-USD).
// For a sending currency s with ds decimals and a receiving currency r with dr
// decimals:
//
//	m_s = usdPerUnit(s) × 10^6 / 10^ds × (1 − serviceSpread(s))
//	      the service multiplier: micro-USD per smallest sending unit
//	m_c = 10^dr / (usdPerUnit(r) × 10^6) × (1 − counterpartySpread(r))
//	      the counterparty multiplier: smallest receiving units per micro-USD
//	m   = m_s × m_c
//	      smallest receiving units per smallest sending unit
//
// When s == r (a domestic payment) no spread applies on either side, so m is
// exactly 1.
//
// With v = serviceVariableFeeRate(s), F_s = serviceFixedFee(s) and
// F_r = counterpartyFixedFee(r) (kept for domestic payments too: it is what
// the payout costs), a locked SENDING amount S gives
//
//	V = ceil(S × v)                 the variable fee, sending units
//	N = S − F_s − V                 what is converted, sending units
//	R = floor(N × m) − F_r          what the recipient gets, receiving units
//
// and the amount is too small (an [*AmountError]) when N ≤ 0 or R ≤ 0.
//
// A locked RECEIVING amount R costs the least S whose forward result is at
// least R; the quote reports exactly R as the receiving amount. The forward
// result never decreases as S grows (V grows by at most 1 when S grows by 1),
// so that least S exists and is found in closed form: N must reach
// N_min = ceil((R + F_r) / m), and since S − ceil(S × v) = floor(S × (1 − v)),
// S = ceil((N_min + F_s) / (1 − v)). The arithmetic then checks S against
// the forward formula, stepping by one if it had to (it does not), so the
// answer is exact and costs O(1).
//
// The fees of a quote, both ways:
//
//	feesIncluded  = F_s + V + ceil(F_r / m)       sending units
//	receivingFees = ceil((F_s + V) × m) + F_r      receiving units
//	exchangeRate  = 10^dr / (10^ds × m)            sending major units per receiving major unit
//
// The rounding rule: what the recipient gets rounds down, fees round up, and a
// locked receiving amount costs the least sending amount that delivers it, so
// the service never pays out a fraction it did not collect.
//
// The sending currency's minSending and maxSending apply to S, whichever side
// is locked; outside them, or too small to cover the fees, a quote fails with
// an [*AmountError]. (So a locked receiving amount can be refused although
// the minimum sending amount delivers it: rounding down leaves the minimum
// some slack, and the least sending amount for it may lie below the
// minimum.) Every intermediate value is a big.Int and every result is
// checked to fit an int64 before it is returned, so any int64 amount (locked
// amounts reach 9e15) gives a quote or an error, never an overflow.
package rates

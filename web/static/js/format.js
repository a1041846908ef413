// Pure formatting helpers for the pages (no DOM), so they can be checked
// with Node: node --input-type=module -e 'import("./format.js")…'.
//
// Money in the person's locale (formatMoney, parseMoney,
// formatExchangeRate) is written with Intl but never computed with floats:
// amounts are integer counts of the smallest unit (BigInt inside), and Intl
// only lays out digits this module has already worked out exactly. Their
// locale is i18n.js's getLocale() unless options.locale says otherwise, and
// their words (units, errors) come from the message catalogue.

import { getLanguage, getLocale, t } from "./i18n.js";

/**
 * Formats a remaining time as mm:ss (minutes may exceed 59), never negative.
 * @param {number} ms milliseconds left
 * @returns {string}
 */
export function formatCountdown(ms) {
  const total = Math.max(0, Math.ceil((Number.isFinite(ms) ? ms : 0) / 1000));
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return String(minutes).padStart(2, "0") + ":" + String(seconds).padStart(2, "0");
}

/**
 * Shortens a long hex key for display: "02a1b2c3d4…e5f6a7".
 * @param {string} hex
 * @returns {string}
 */
export function shortKey(hex) {
  if (typeof hex !== "string") return "";
  return hex.length > 20 ? hex.slice(0, 10) + "…" + hex.slice(-6) : hex;
}

/**
 * Turns seconds into words for a retry hint, in the language of the page:
 * "45 seconds", "3 minutes", "a moment" when the wait is not known.
 * @param {number} seconds
 * @returns {string}
 */
export function formatWait(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 0) return t("money.wait.moment");
  if (seconds < 90) return t("money.wait.seconds", { count: Math.ceil(seconds) });
  return t("money.wait.minutes", { count: Math.ceil(seconds / 60) });
}

/**
 * Formats an RFC 3339 time for a person, in their locale and time zone:
 * "Nov 23, 2026, 9:41 AM". "" when it is not a time.
 *
 * @param {string} iso
 * @param {{seconds?: boolean}} [options]
 * @returns {string}
 */
export function formatTime(iso, { seconds = false } = {}) {
  const t = typeof iso === "string" ? Date.parse(iso) : NaN;
  if (!Number.isFinite(t)) return "";
  return new Date(t).toLocaleString([], { dateStyle: "medium", timeStyle: seconds ? "medium" : "short" });
}

// The decimals of the account types' currencies (shared/accountrules
// Currencies), which GET /api/config carries and the page tells this module
// at start (setCurrencies), so that money is written before the wasm module
// or the service's answers are there. The service's Currency objects carry
// decimals too and win over these; they are for a bare code.
const currencyDecimals = new Map();

/**
 * Takes the currencies' facts of GET /api/config (currencies).
 *
 * @param {Array<{code: string, decimals: number}>} list
 */
export function setCurrencies(list) {
  currencyDecimals.clear();
  for (const c of Array.isArray(list) ? list : []) {
    if (c && typeof c.code === "string" && Number.isInteger(c.decimals) && c.decimals >= 0 && c.decimals <= 18) {
      currencyDecimals.set(c.code, c.decimals);
    }
  }
}

/**
 * Formats an amount given in the smallest unit of its currency for the
 * person's locale, with Intl's symbol and its placement, and every digit
 * exact (BigInt, no rounding, no float):
 *
 *   formatMoney(123456, "USD", {locale: "en-US"})  → "$1,234.56"
 *   formatMoney(123456, "USD", {locale: "de-DE"})  → "1.234,56 $"
 *   formatMoney(123456, "USD", {locale: "fr-FR"})  → "1 234,56 $US"
 *   formatMoney(1500, "XOF", {locale: "fr-FR"})    → "1 500 F CFA"
 *   formatMoney("150000", "BTC")                   → "0.0015 BTC"
 *   formatMoney("150000", "BTC", {unit: "sats"})   → "150,000 sats"
 *   formatMoney(-5, "USD", {signDisplay: "always"}) → "-$0.05"
 *
 * Bitcoin is written with the text "BTC" (or "sats"), not "₿": U+20BF came
 * with Unicode 10 (2017) and many system fonts still lack it, where it would
 * show as an empty box; and "BTC" after the number reads the same way in
 * every language, where Intl would put an unknown code first ("BTC 0.0015")
 * in English. In BTC, zeros after the second decimal are left out
 * (0.00150000 → 0.0015, 1.00000000 → 1.00) unless options.trim is false.
 *
 * Numbers the locale writes in other digits (Arabic-Indic…) get them for
 * every digit. The spaces inside are the locale's no-break spaces, so an
 * amount never wraps.
 *
 * @param {number | bigint | string} amount integer in the smallest unit: a
 *   Number (beyond 2^53 it has already lost precision in JSON.parse), a
 *   BigInt, or a string of digits with an optional sign
 * @param {string | {code?: string, decimals?: number}} currency a code or
 *   the service's Currency object
 * @param {{locale?: string, unit?: "BTC" | "sats", trim?: boolean,
 *   signDisplay?: "auto" | "always" | "exceptZero" | "never"}} [options]
 * @returns {string} "" when amount or currency is not one
 */
export function formatMoney(amount, currency, options = {}) {
  const cur = currencyOf(currency);
  const minor = toMinor(amount);
  if (!cur || minor === null) return "";
  const locale = options.locale || getLocale();
  const signDisplay = options.signDisplay || "auto";
  if (cur.code === "BTC" && options.unit === "sats") {
    const text = exactFormat(locale, { signDisplay }, minor, 0, 0);
    return t("money.sats.amount", { amount: text, count: minor });
  }
  if (cur.code === "BTC") {
    const minimum = options.trim === false ? cur.decimals : Math.min(2, cur.decimals);
    return t("money.btc.amount", { amount: exactFormat(locale, { signDisplay }, minor, cur.decimals, minimum) });
  }
  return exactFormat(locale, { style: "currency", currency: cur.code, signDisplay }, minor, cur.decimals, cur.decimals);
}

/**
 * Writes an amount given in the smallest unit of its currency as a plain
 * decimal number in major units, for files read by programs (a CSV
 * statement): a "." before the currency's decimals, a "-" for a negative
 * amount, no grouping, no symbol, every digit exact (BigInt).
 *
 *   decimalAmount(-2500, "USD")     → "-25.00"
 *   decimalAmount(1500, "XOF")      → "1500"
 *   decimalAmount("150000", "BTC")  → "0.00150000"
 *
 * @param {number | bigint | string} amount integer in the smallest unit
 * @param {string | {code?: string, decimals?: number}} currency
 * @returns {string} "" when amount or currency is not one
 */
export function decimalAmount(amount, currency) {
  const cur = currencyOf(currency);
  const minor = toMinor(amount);
  if (!cur || minor === null) return "";
  const abs = minor < 0n ? -minor : minor;
  const digits = abs.toString().padStart(cur.decimals + 1, "0");
  const whole = digits.slice(0, digits.length - cur.decimals);
  const fraction = cur.decimals > 0 ? "." + digits.slice(digits.length - cur.decimals) : "";
  return (minor < 0n ? "-" : "") + whole + fraction;
}

/**
 * Parses an amount typed in the person's locale into an integer count of
 * the currency's smallest unit, with string and BigInt arithmetic only.
 *
 * What it takes: the locale's decimal mark and grouping ("1.234,56" in de,
 * "1,234.56" in en, "1 234,56" in fr with a space, a no-break or a narrow
 * no-break space, "12,34,567.50" in en-IN), grouping by spaces or
 * apostrophes in any locale, a bare decimal mark ("12,5" in de, ",5", "7,"),
 * zeros past the currency's decimals ("12,500" is 1250 cents), the
 * currency's code or symbol before or after ("12,50 €", "$12.50"), and the
 * locale's own digits.
 *
 * What it refuses, each with a reason and a message that says what to do:
 *   EMPTY      nothing typed
 *   INVALID    not an amount ("abc", "1e5", "1,23,4", "1.234.5")
 *   NEGATIVE   a minus sign
 *   ZERO       zero
 *   DECIMALS   more decimals than the currency has ("Use at most 2 decimals
 *              for USD, like 12.50.")
 *   SEPARATOR  the other convention's decimal mark ("12.50" in de: "Use “,”
 *              for the decimals, like 12,50.")
 *   AMBIGUOUS  one group of three after a grouping mark in a currency with 3
 *              or more decimals: "1,234" in BTC could be 1234 or 1.234
 *   TOO_LARGE  above options.max
 *
 *   parseMoney("1.234,56", "EUR", {locale: "de-DE"}) → {ok: true, amount: 123456, minor: 123456n, text: "123456"}
 *   parseMoney("12.5", "EUR", {locale: "de-DE"})     → {ok: false, reason: "SEPARATOR", message: "Use “,” for the decimals, like 12,50."}
 *
 * @param {string} text what the person typed
 * @param {string | {code?: string, decimals?: number}} currency
 * @param {{locale?: string, max?: number | bigint | string, unit?: "BTC" | "sats"}} [options]
 *   max is the largest amount accepted in the smallest unit
 *   (Number.MAX_SAFE_INTEGER when absent); unit "sats" reads BTC typed in
 *   satoshis
 * @returns {{ok: true, amount: number | undefined, minor: bigint, text: string}
 *   | {ok: false, reason: string, message: string}}
 *   amount is minor as a Number when it is a safe integer (undefined above
 *   2^53, possible only with a larger max); text is minor in decimal digits
 */
export function parseMoney(text, currency, options = {}) {
  const cur = currencyOf(currency) || { code: "", decimals: 0 };
  const locale = options.locale || getLocale();
  const sats = cur.code === "BTC" && options.unit === "sats";
  const decimals = sats ? 0 : cur.decimals;
  const unitName = sats ? t("money.sats.amount", { amount: "", count: 2 }).trim() : cur.code;
  const max = toMinor(options.max ?? Number.MAX_SAFE_INTEGER) ?? BigInt(Number.MAX_SAFE_INTEGER);
  const example = exampleAmount(locale, decimals);
  const fail = (reason, key, params = {}) => ({ ok: false, reason, message: t(key, { example, ...params }) });

  const sep = separators(locale);
  // Bidi marks (U+200E, U+200F, U+061C…) come with copied right-to-left
  // amounts; they are not part of the number.
  let s = toAsciiDigits(String(text ?? ""), locale).replace(/[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g, "").trim();
  s = stripCurrency(s, cur, locale, sats).replace(/[\s\u00a0\u202f\u2009\u2007]+/g, " ").replaceAll("’", "'");
  if (s === "") return fail("EMPTY", "money.error.empty");
  if (/^[-−–]|[-−–]$/.test(s)) return fail("NEGATIVE", "money.error.negative");
  let dec = sep.decimal;
  if (dec !== "." && dec !== ",") {
    // A locale with its own marks (Arabic's ٫ and ٬): read those as "." and ",".
    s = s.replaceAll(dec, ".").replaceAll(sep.group, ",");
    dec = ".";
  }
  const other = dec === "," ? "." : ",";
  if (!/^[0-9 .,']+$/.test(s)) return fail("INVALID", "money.error.invalid");

  let whole = s;
  let fraction = "";
  const at = s.indexOf(dec);
  if (at >= 0) {
    if (s.indexOf(dec, at + 1) >= 0) return fail("INVALID", "money.error.invalid");
    whole = s.slice(0, at);
    fraction = s.slice(at + 1);
    if (!/^[0-9]*$/.test(fraction)) return fail("INVALID", "money.error.invalid");
    if (whole === "" && fraction === "") return fail("INVALID", "money.error.invalid");
  }
  const marks = new Set(whole.replace(/[0-9]/g, ""));
  if (marks.size > 1) return fail("INVALID", "money.error.invalid");
  if (marks.size === 1) {
    const [mark] = marks;
    const groups = whole.split(mark);
    if (!validGrouping(groups)) {
      // One other-convention decimal mark ("12.50" in de, "12,5" in en).
      if (mark === other && at < 0 && groups.length === 2 && groups[0] !== "" && /^[0-9]+$/.test(groups[1])) {
        if (decimals === 0) return fail("DECIMALS", "money.error.wholeOnly", { currency: unitName });
        return fail("SEPARATOR", "money.error.separator", { decimal: sep.decimal });
      }
      return fail("INVALID", "money.error.invalid");
    }
    if (mark === other && at < 0 && groups.length === 2 && decimals >= 3) {
      const wholeReading = groups.join("");
      const fractionReading = exactFormat(locale, { useGrouping: false }, BigInt(wholeReading), 3, 3);
      return fail("AMBIGUOUS", "money.error.ambiguous", {
        text: s,
        whole: exactFormat(locale, { useGrouping: false }, BigInt(wholeReading), 0, 0),
        fraction: fractionReading,
      });
    }
    whole = groups.join("");
  }
  fraction = fraction.replace(/0+$/, "");
  if (fraction.length > decimals) {
    if (decimals === 0) return fail("DECIMALS", "money.error.wholeOnly", { currency: unitName });
    return fail("DECIMALS", "money.error.decimals", { count: decimals, currency: unitName });
  }
  const minor = BigInt(whole || "0") * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
  if (minor === 0n) return fail("ZERO", "money.error.zero");
  if (minor > max) {
    const shown = sats ? formatMoney(max, cur, { locale, unit: "sats" }) : formatMoney(max, cur, { locale });
    return fail("TOO_LARGE", "money.error.tooLarge", { max: shown || String(max) });
  }
  const n = Number(minor);
  return { ok: true, amount: Number.isSafeInteger(n) ? n : undefined, minor, text: minor.toString() };
}

/**
 * An amount to show as an example in the person's locale, for a currency
 * with `decimals` decimals (or in sats): "12.50", "12,50", "1500",
 * "0.015". For placeholders and hints.
 *
 * @param {string | {code?: string, decimals?: number}} currency
 * @param {{locale?: string, unit?: "BTC" | "sats"}} [options]
 * @returns {string}
 */
export function amountExample(currency, options = {}) {
  const cur = currencyOf(currency) || { code: "", decimals: 2 };
  const decimals = cur.code === "BTC" && options.unit === "sats" ? 0 : cur.decimals;
  return exampleAmount(options.locale || getLocale(), decimals);
}

/**
 * Writes an exchange rate the way people read it, "1 GBP = 1.34 USD", in
 * the direction that puts a number of 1 or more on the right (so "1 USD =
 * 18.349 MXN", not "1 MXN = 0.0545 USD"), with five significant digits but
 * every digit of the whole part ("1 BTC = 56,306,306 XOF"). Display only:
 * the quote's amounts are the exact ones.
 *
 *   formatExchangeRate(0.0545, "USD", "MXN", {locale: "en-US"}) → "1 USD = 18.349 MXN"
 *   formatExchangeRate(1.34, "USD", "GBP", {locale: "de-DE"})   → "1 GBP = 1,34 USD"
 *
 * @param {number} rate the service's exchangeRate: sending major units per
 *   receiving major unit (a quote's, a transaction's, an exchange-rates row's)
 * @param {string | {code?: string}} sending
 * @param {string | {code?: string}} receiving
 * @param {{locale?: string, significantDigits?: number, base?: string}} [options]
 *   base puts that currency's code on the left whatever the number
 * @returns {string} "" when rate is not a positive finite number
 */
export function formatExchangeRate(rate, sending, receiving, options = {}) {
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) return "";
  const send = codeOf(sending);
  const receive = codeOf(receiving);
  const receivingFirst = options.base ? options.base === receive : rate >= 1;
  const [unit, price, value] = receivingFirst ? [receive, send, rate] : [send, receive, 1 / rate];
  const digits = Number.isInteger(options.significantDigits) && options.significantDigits >= 1 && options.significantDigits <= 21
    ? options.significantDigits
    : 5;
  const nf = new Intl.NumberFormat(options.locale || getLocale(), {
    maximumSignificantDigits: digits,
    maximumFractionDigits: 0,
    roundingPriority: "morePrecision",
  });
  return t("money.rate", { unit, price, value: nf.format(value) });
}

/**
 * A currency's name in the language of the page: "Euro", "Mexican Peso"
 * (Intl.DisplayNames), "Bitcoin"; the code when Intl has no name.
 *
 * @param {string | {code?: string}} currency
 * @param {{locale?: string}} [options]
 * @returns {string}
 */
export function currencyName(currency, options = {}) {
  const code = codeOf(currency);
  if (code === "BTC") return t("money.btc.name");
  try {
    return new Intl.DisplayNames([options.locale || getLanguage()], { type: "currency", fallback: "code" }).of(code) || code;
  } catch {
    return code;
  }
}

// currencyOf normalizes a code or a Currency object to {code, decimals,
// symbol}: the object's decimals, else those told by setCurrencies, else what Intl
// knows of the ISO code; null when there is no well-formed code.
function currencyOf(currency) {
  const code = codeOf(currency);
  if (!/^[A-Z]{3}$/.test(code)) return null;
  const object = typeof currency === "object" && currency !== null ? currency : {};
  const symbol = typeof object.symbol === "string" ? object.symbol : "";
  if (Number.isInteger(object.decimals) && object.decimals >= 0 && object.decimals <= 18) {
    return { code, decimals: object.decimals, symbol };
  }
  if (currencyDecimals.has(code)) return { code, decimals: currencyDecimals.get(code), symbol };
  try {
    const iso = new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions();
    return { code, decimals: iso.maximumFractionDigits, symbol };
  } catch {
    return null;
  }
}

function codeOf(currency) {
  const code = typeof currency === "string" ? currency : currency && typeof currency.code === "string" ? currency.code : "";
  return code.trim().toUpperCase();
}

// toMinor reads an integer amount exactly: a BigInt, an integral Number, or
// a string of digits with an optional sign; null otherwise.
function toMinor(amount) {
  if (typeof amount === "bigint") return amount;
  if (typeof amount === "number") return Number.isInteger(amount) ? BigInt(amount) : null;
  if (typeof amount === "string" && /^\s*[+-]?\d+\s*$/.test(amount)) return BigInt(amount.trim());
  return null;
}

// exactFormat lays out minor / 10^decimals with Intl (symbol, sign, grouping,
// digits of the locale) but puts in the fraction digits itself: Intl is given
// only the BigInt whole part, so nothing passes through a float. Zeros at
// the end of the fraction are dropped down to `minimum` decimals.
function exactFormat(locale, intlOptions, minor, decimals, minimum) {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  let fraction = decimals > 0 ? (abs % scale).toString().padStart(decimals, "0") : "";
  while (fraction.length > minimum && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  const nf = new Intl.NumberFormat(locale, {
    ...intlOptions,
    minimumFractionDigits: fraction.length,
    maximumFractionDigits: fraction.length,
  });
  // A whole part of 0 under a non-zero fraction is formatted as 1 and its
  // digit replaced, so that Intl places a sign (-$0.05, +0,05 €) as it does
  // for any other non-zero amount.
  const zeroWhole = whole === 0n && /[1-9]/.test(fraction);
  const template = (zeroWhole ? 1n : whole) * (negative ? -1n : 1n);
  const digits = localDigits(nf);
  return nf
    .formatToParts(template)
    .map((p) => {
      if (p.type === "fraction") return [...fraction].map((d) => digits[d]).join("");
      if (p.type === "integer" && zeroWhole) return digits[0];
      return p.value;
    })
    .join("");
}

const digitCache = new Map();

// localDigits is the ten digits of nf's numbering system ("0"…"9" for latn).
function localDigits(nf) {
  const { locale, numberingSystem } = nf.resolvedOptions();
  if (numberingSystem === "latn") return "0123456789";
  if (!digitCache.has(numberingSystem)) {
    const one = new Intl.NumberFormat(locale, { numberingSystem, useGrouping: false });
    digitCache.set(numberingSystem, Array.from({ length: 10 }, (_, i) => one.format(i)));
  }
  return digitCache.get(numberingSystem);
}

function toAsciiDigits(text, locale) {
  const digits = localDigits(new Intl.NumberFormat(locale));
  if (digits === "0123456789") return text;
  let out = text;
  for (let i = 0; i < 10; i++) out = out.replaceAll(digits[i], String(i));
  return out;
}

// separators is the locale's decimal mark and grouping mark (a space for
// every kind of space), as Intl writes them.
function separators(locale) {
  const parts = new Intl.NumberFormat(locale, { useGrouping: true }).formatToParts(1234567.5);
  const decimal = parts.find((p) => p.type === "decimal")?.value || ".";
  let group = parts.find((p) => p.type === "group")?.value || ",";
  if (/^[\s\u00a0\u202f\u2009\u2007]$/.test(group)) group = " ";
  if (group === "’") group = "'";
  return { decimal, group };
}

// validGrouping: the first group 1 to 3 digits, the others 3 (1,234,567), or
// the Indian way (12,34,567: 1 or 2 digits first, 2s, then 3 last).
function validGrouping(groups) {
  if (groups.length < 2 || !groups.every((g) => /^[0-9]+$/.test(g))) return false;
  const [first, ...rest] = groups;
  const last = rest[rest.length - 1];
  if (last.length !== 3) return false;
  const middle = rest.slice(0, -1);
  if (first.length <= 3 && middle.every((g) => g.length === 3)) return true;
  return first.length <= 2 && middle.length > 0 && middle.every((g) => g.length === 2);
}

// stripCurrency takes off the currency's code or symbol (the service's, and
// Intl's for the locale) typed before or after the number.
function stripCurrency(s, cur, locale, sats) {
  const marks = new Set([cur.code]);
  if (cur.code === "BTC") ["₿", "sats", "sat", "BTC"].forEach((m) => marks.add(m));
  if (cur.symbol) marks.add(cur.symbol);
  for (const currencyDisplay of ["symbol", "narrowSymbol"]) {
    try {
      const parts = new Intl.NumberFormat(locale, { style: "currency", currency: cur.code, currencyDisplay }).formatToParts(1);
      const symbol = parts.find((p) => p.type === "currency")?.value;
      if (symbol) marks.add(symbol);
    } catch {
      // not a currency Intl knows
    }
  }
  if (sats) marks.add(t("money.sats.amount", { amount: "", count: 2 }).trim());
  const sorted = [...marks].filter(Boolean).sort((a, b) => b.length - a.length);
  for (const mark of sorted) {
    const upper = s.toUpperCase();
    const m = mark.toUpperCase();
    if (upper.startsWith(m)) return s.slice(mark.length).trim();
    if (upper.endsWith(m)) return s.slice(0, s.length - mark.length).trim();
  }
  return s;
}

function exampleAmount(locale, decimals) {
  if (decimals === 0) return exactFormat(locale, { useGrouping: false }, 1500n, 0, 0);
  if (decimals <= 2) return exactFormat(locale, { useGrouping: false }, 1250n / 10n ** BigInt(2 - decimals), decimals, decimals);
  return exactFormat(locale, { useGrouping: false }, 15n * 10n ** BigInt(decimals - 3), decimals, 0);
}

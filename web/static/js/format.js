// Pure formatting helpers for the pages (no DOM), so they can be checked
// with Node: node --input-type=module -e 'import("./format.js")…'.

/**
 * Formats an amount in the smallest unit of its currency, e.g.
 * formatAmount(123456, {code: "USD", symbol: "$", decimals: 2}) is
 * "$1,234.56 USD". Integer arithmetic only: no floating-point rounding.
 * Amounts beyond 2^53 have already lost precision in JSON.parse.
 *
 * @param {number} amount integer amount in the smallest unit
 * @param {{code?: string, symbol?: string, decimals?: number}} currency
 * @returns {string}
 */
export function formatAmount(amount, currency = {}) {
  const decimals = Number.isInteger(currency.decimals) && currency.decimals >= 0 && currency.decimals <= 18
    ? currency.decimals
    : 0;
  let n = BigInt(Number.isFinite(amount) ? Math.trunc(amount) : 0);
  const negative = n < 0n;
  if (negative) n = -n;
  const digits = n.toString().padStart(decimals + 1, "0");
  const whole = decimals > 0 ? digits.slice(0, -decimals) : digits;
  const fraction = decimals > 0 ? digits.slice(-decimals) : "";
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const symbol = typeof currency.symbol === "string" ? currency.symbol : "";
  const code = typeof currency.code === "string" ? currency.code : "";
  const number = grouped + (fraction ? "." + fraction : "");
  return ((negative ? "−" : "") + symbol + number + (code ? " " + code : "")).trim();
}

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
 * Turns seconds into words for a retry hint: "45 seconds", "3 minutes".
 * @param {number} seconds
 * @returns {string}
 */
export function formatWait(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 0) return "a moment";
  if (seconds < 90) return Math.ceil(seconds) + (Math.ceil(seconds) === 1 ? " second" : " seconds");
  const minutes = Math.ceil(seconds / 60);
  return minutes + " minutes";
}

/**
 * Parses an amount typed in major units ("12.50", "1,234.5", ".5") into an
 * integer in the smallest unit of a currency with `decimals` decimal places,
 * with string and BigInt arithmetic only: no floating-point rounding.
 * Grouping commas are accepted only where they group thousands. Zeros past
 * the currency's decimals are accepted ("12.500" is 1250 in cents); any other
 * extra decimal is refused, as are negative, zero, empty and non-numeric text
 * and amounts above max.
 *
 *   parseAmount("12.50", 2)  → {ok: true, amount: 1250}
 *   parseAmount("1.005", 2)  → {ok: false, reason: "DECIMALS", message: "Use at most 2 decimal places."}
 *   parseAmount("1500", 0)   → {ok: true, amount: 1500}
 *
 * @param {string} text what the person typed
 * @param {number} decimals the currency's decimal places (0 to 18)
 * @param {number} [max] the largest amount accepted, in the smallest unit
 *   (Number.MAX_SAFE_INTEGER at most)
 * @returns {{ok: true, amount: number} | {ok: false, reason: "EMPTY"|"INVALID"|"NEGATIVE"|"ZERO"|"DECIMALS"|"TOO_LARGE", message: string}}
 */
export function parseAmount(text, decimals, max = Number.MAX_SAFE_INTEGER) {
  const places = Number.isInteger(decimals) && decimals >= 0 && decimals <= 18 ? decimals : 0;
  const limit = BigInt(Number.isSafeInteger(max) && max >= 0 ? max : Number.MAX_SAFE_INTEGER);
  const fail = (reason, message) => ({ ok: false, reason, message });
  const s = typeof text === "string" ? text.trim() : "";
  if (s === "") return fail("EMPTY", "Enter an amount.");
  if (/^[-−–]/.test(s)) return fail("NEGATIVE", "Enter an amount above zero, without a minus sign.");
  if (places > 0 && /^\d+,\d{1,2}$/.test(s)) return fail("INVALID", "Use a point for the decimals, such as 12.50.");
  const m = /^(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[1] === "" && !m[2])) {
    return fail("INVALID", "Enter the amount in digits, such as " + (places > 0 ? "12." + "5".padEnd(places, "0") : "1200") + ".");
  }
  const whole = m[1].replaceAll(",", "") || "0";
  const fraction = (m[2] || "").replace(/0+$/, "");
  if (fraction.length > places) {
    return fail(
      "DECIMALS",
      places === 0
        ? "Enter a whole amount: this currency has no decimal places."
        : "Use at most " + places + (places === 1 ? " decimal place." : " decimal places."),
    );
  }
  const amount = BigInt(whole) * 10n ** BigInt(places) + BigInt(fraction.padEnd(places, "0") || "0");
  if (amount === 0n) return fail("ZERO", "Enter an amount above zero.");
  if (amount > limit) return fail("TOO_LARGE", "That amount is too large.");
  return { ok: true, amount: Number(amount) };
}

/**
 * Formats an exchange rate: "1 MXN = $0.0585 USD" for a rate of 0.0585
 * units of `price` per unit of `unit`. About six significant digits, never
 * fewer decimals than `price` has; display only (the quote's amounts are
 * the exact ones).
 *
 * @param {number} rate units of price per unit of unit, > 0
 * @param {{code?: string}} unit the currency counted in ones
 * @param {{code?: string, symbol?: string, decimals?: number}} price
 * @returns {string} "" when rate is not a positive finite number
 */
export function formatRate(rate, unit = {}, price = {}) {
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) return "";
  const minimum = Number.isInteger(price.decimals) && price.decimals >= 0 && price.decimals <= 18 ? price.decimals : 0;
  const digits = Math.min(12, Math.max(minimum, 5 - Math.floor(Math.log10(rate))));
  let [whole, fraction = ""] = rate.toFixed(digits).split(".");
  while (fraction.length > minimum && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const symbol = typeof price.symbol === "string" ? price.symbol : "";
  const code = typeof price.code === "string" ? price.code : "";
  const number = whole + (fraction ? "." + fraction : "");
  return ("1 " + (unit.code || "") + " = " + symbol + number + (code ? " " + code : "")).replace(/\s+/g, " ").trim();
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

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

// CSV files the pages write (a month of the statement), as RFC 4180 has
// them and spreadsheets open them. Pure (no DOM), so a test can import it
// into a blank page.
//
//   - Fields are separated by "," and records end with CRLF.
//   - A field holding a comma, a double quote, a line break, or spaces at
//     either end is put in double quotes, its double quotes doubled.
//   - The text starts with a byte order mark, so that a spreadsheet reads
//     it as UTF-8 (words such as "Payment failed — money back"
//     would otherwise come out garbled in Excel).
//   - A text field starting with =, +, -, @, a tab or a carriage return gets
//     a "'" in front: a spreadsheet would run it as a formula (CSV or
//     formula injection). Numbers are left as they are, so that "-25.00"
//     stays a number; a number column takes only plain decimals, anything
//     else in it is written as text.

const BOM = "\ufeff";
const FORMULA = /^[=+\-@\t\r]/;
const NUMBER = /^-?\d+(\.\d+)?$/;
const QUOTE = /[",\r\n]|^\s|\s$/;

/**
 * One field of a record.
 *
 * @param {unknown} value written as text (null and undefined as "")
 * @param {{numeric?: boolean}} [options] numeric: the column holds numbers
 *   such as "-25.00" (format.js decimalAmount), written as they are
 * @returns {string}
 */
export function csvField(value, { numeric = false } = {}) {
  let s = value === null || value === undefined ? "" : String(value);
  if (!(numeric && NUMBER.test(s)) && FORMULA.test(s)) s = "'" + s;
  return QUOTE.test(s) ? '"' + s.replaceAll('"', '""') + '"' : s;
}

/**
 * A whole file: the header, then the rows, each a list of fields.
 *
 * @param {readonly unknown[]} header the columns' names (text)
 * @param {readonly (readonly unknown[])[]} rows
 * @param {{numeric?: readonly number[]}} [options] numeric: the indexes of
 *   the columns that hold numbers
 * @returns {string}
 */
export function toCSV(header, rows, { numeric = [] } = {}) {
  const numbers = new Set(numeric);
  const lines = [header.map((v) => csvField(v))];
  for (const row of rows) lines.push(row.map((v, i) => csvField(v, { numeric: numbers.has(i) })));
  return BOM + lines.map((fields) => fields.join(",") + "\r\n").join("");
}

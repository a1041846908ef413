// Country names, in the language of the page's words, for the add-recipient
// form's country lists and a recipient's facts.

import { getLanguage, getLocale } from "./i18n.js";

// ---- countries ------------------------------------------------------------------
//
// Country fields are lists of names in the language of the page's messages
// (Intl.DisplayNames; wordsLocale), sorted by name; the value sent is the ISO
// 3166-1 alpha-2 code. The codes offered are those the service takes for a
// holder's nationality and address: the wasm module's form description gives
// them (shared/accountrules, every assigned code).

// wordsLocale is the locale of words the browser writes for the page
// (country names, month names): the language of the messages (i18n.js
// getLanguage), in the person's own variant of it when their number locale
// is one ("de-AT"), so that an English page does not name countries in
// French because the person reads numbers the French way.
export function wordsLocale() {
  const language = getLanguage();
  const locale = getLocale();
  return locale.split("-")[0].toLowerCase() === language ? locale : language;
}

// Country names and their sorted list, for the locale they were made in.
const countries = { locale: "", names: null, list: null, codes: null };

function countryCache() {
  const locale = wordsLocale();
  if (countries.locale !== locale) Object.assign(countries, { locale, names: null, list: null, codes: null });
  return countries;
}

/** The name of a country code in the page's language (the code itself when unknown). */
export function countryName(code) {
  if (typeof code !== "string" || code === "") return "";
  const cache = countryCache();
  if (cache.names === null) {
    try {
      cache.names = new Intl.DisplayNames([cache.locale], { type: "region", fallback: "code" });
    } catch {
      cache.names = { of: (c) => c };
    }
  }
  try {
    return cache.names.of(code) || code;
  } catch {
    return code;
  }
}

/** [[code, name]] of these country codes, sorted by name as the page's language sorts. */
export function countryOptions(codes) {
  const cache = countryCache();
  if (cache.list === null || cache.codes !== codes) {
    const collator = new Intl.Collator([cache.locale]);
    cache.codes = codes;
    cache.list = codes.map((c) => [c, countryName(c)]).sort((a, b) => collator.compare(a[1], b[1]));
  }
  return cache.list;
}

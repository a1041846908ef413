// The message catalogue: every string a person can read on the pages comes
// from here, so that a translation is one file.
//
// Catalogues. /i18n/en.js (always loaded: it is the fallback) and one file per
// other language, /i18n/<language>.js, loaded with a dynamic import only when
// that language is chosen. Each is an ES module whose default export is a
// flat object from key to message.
//
// Keys. Dotted lowerCamel words, first the view, then the part of it, then
// the item: "home.balance.available", "send.review.fees",
// "activity.detail.reference", "recipients.form.error.duplicate",
// "security.sessions.revoke". Strings shared by every view are under
// "common." (buttons such as "common.cancel") and "nav." (the navigation);
// format.js's are under "money.". A key names what the text is for, not what
// it says, so that rewording the English keeps the key. Error messages are
// under "<view>.error.<what>", written for a person: what went wrong and what
// to do ("Type an amount like 12.50").
//
// Placeholders. {name} in a message is replaced by params.name. A number or
// BigInt parameter is written with the person's number conventions
// (1,234 / 1.234 / 1 234); pass a string to keep text as it is (an amount
// already formatted by format.js, a code). There is no escaping: braces are
// for placeholders only. A placeholder without a parameter stays as it is, so
// that the mistake shows.
//
// Plurals. A message that depends on a count is an object with one entry per
// CLDR plural category of its language (Intl.PluralRules: English and German
// use "one" and "other"; "other" is always required), chosen by
// params.count: {one: "{count} sat", other: "{count} sats"}. A form may leave
// out {count} ("eine Nachkommastelle"), and the text may show another
// parameter instead (an amount formatted for another locale): the form is
// chosen by params.count all the same.
//
// HTML. applyTranslations(root) fills the elements marked
//   data-i18n="key"                              textContent
//   data-i18n-attr="placeholder:key,aria-label:key"  attributes
//   data-i18n-params='{"count": 3}'              parameters of both (JSON)
// Never innerHTML: messages are text.
//
// Locale. Two things are chosen from navigator.languages (setLocale):
//   - the language of the messages: the first entry whose language has a
//     catalogue, else English;
//   - the locale of numbers and money (getLocale): the first entry that Intl
//     knows, even one without a catalogue, because that is how the person
//     reads and types numbers ("fr-FR" reads "1 234,56 $US" in an English
//     page).

import en from "../i18n/en.js";

/** The languages that have a catalogue, English first. */
export const LANGUAGES = Object.freeze(["en", "de"]);

const loaders = {
  en: async () => en,
  de: async () => (await import("../i18n/de.js")).default,
};

// English messages until setLocale has loaded the chosen catalogue; numbers
// in the browser's locale from the start (choosing it needs no loading).
// The locale is chosen when first asked for (getLocale): the first use of
// Intl loads the browser's locale data, a long task on a slow phone, which
// the sign-in page need not pay before its first paint.
const state = { language: "en", locale: "", languages: null, messages: en };

/**
 * The language whose catalogue serves the person: the first of `languages`
 * (BCP 47 tags, best first) whose primary language is in LANGUAGES, else
 * "en".
 *
 *   chooseLanguage(["fr-FR", "de-AT", "en"]) → "de"
 *
 * @param {readonly string[]} [languages] defaults to navigator.languages
 * @returns {string}
 */
export function chooseLanguage(languages = browserLanguages()) {
  for (const tag of languages) {
    const language = primary(tag);
    if (LANGUAGES.includes(language)) return language;
  }
  return "en";
}

/**
 * The locale of numbers and money: the first of `languages` that Intl
 * supports, canonicalized ("de-de" → "de-DE"), else "en-US".
 *
 * @param {readonly string[]} [languages] defaults to navigator.languages
 * @returns {string}
 */
export function chooseLocale(languages = browserLanguages()) {
  for (const tag of languages) {
    try {
      const [supported] = Intl.NumberFormat.supportedLocalesOf([tag]);
      if (supported) return Intl.getCanonicalLocales(tag)[0];
    } catch {
      // not a well-formed tag: try the next one
    }
  }
  return "en-US";
}

/**
 * Chooses the language and the number locale from `languages` (a tag or a
 * list, best first; the browser's by default), loads that language's
 * catalogue (English if it does not load), and sets the document's lang
 * attribute. Tests pass a tag to fix the locale: setLocale("de-DE").
 *
 * @param {string | readonly string[]} [languages]
 * @returns {Promise<{language: string, locale: string}>}
 */
export async function setLocale(languages = browserLanguages()) {
  const list = typeof languages === "string" ? [languages] : languages;
  let language = chooseLanguage(list);
  let messages;
  try {
    messages = await loadCatalogue(language);
  } catch (err) {
    // A catalogue that does not load (the network dropped, a stale deploy)
    // must not take the pages with it: they stay in English.
    console.warn("i18n: the " + language + " messages did not load; English it is", err);
    language = "en";
    messages = en;
  }
  Object.assign(state, { language, locale: "", languages: list, messages });
  if (typeof document !== "undefined" && document.documentElement) document.documentElement.lang = language;
  return {
    language,
    get locale() {
      return getLocale();
    },
  };
}

/** @returns {string} the locale of numbers and money, e.g. "de-DE" */
export function getLocale() {
  if (state.locale === "") state.locale = state.languages ? chooseLocale(state.languages) : chooseLocale();
  return state.locale;
}

/** @returns {string} the language of the messages, e.g. "de" */
export function getLanguage() {
  return state.language;
}

/**
 * A language's catalogue (key → message), English for a language without
 * one. For the pages' own use and for tests comparing catalogues.
 *
 * @param {string} language
 * @returns {Promise<Record<string, string | Record<string, string>>>}
 */
export async function loadCatalogue(language) {
  const load = Object.hasOwn(loaders, language) ? loaders[language] : loaders.en;
  return load();
}

/**
 * The message `key` in the chosen language (English when that language
 * lacks it, the key itself when English does too), with its placeholders
 * filled from params and, for a plural message, the form params.count
 * selects.
 *
 *   t("nav.home")                              → "Home"
 *   t("money.sats.amount", {count: 1500})      → "1,500 sats"
 *   t("money.error.zero")                      → "Type an amount above zero."
 *
 * @param {string} key
 * @param {Record<string, string | number | bigint>} [params]
 * @returns {string}
 */
export function t(key, params = {}) {
  let language = state.language;
  let message = Object.hasOwn(state.messages, key) ? state.messages[key] : undefined;
  if (message === undefined && Object.hasOwn(en, key)) {
    message = en[key];
    language = "en";
  }
  if (message === undefined) return key;
  if (typeof message === "object" && message !== null) message = pluralForm(message, language, params.count);
  return fill(String(message), params);
}

/** A service value ("UNDER_REVIEW") in words ("Under review"), for one the catalogue has no words for. */
export function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  const s = value.toLowerCase().replaceAll("_", " ");
  return s[0].toUpperCase() + s.slice(1);
}

/**
 * The entry of a table of words for a service value (a status, a reason),
 * or null when the table has none: only the table's own keys count, so a
 * value such as "constructor" finds nothing.
 *
 * @template T
 * @param {Record<string, T>} table
 * @param {unknown} value
 * @returns {T | null}
 */
export function said(table, value) {
  return typeof value === "string" && Object.hasOwn(table, value) ? table[value] : null;
}

/**
 * Fills the elements under root (and root itself) marked with data-i18n
 * (text) and data-i18n-attr (attributes), with the parameters of
 * data-i18n-params. Call it again after setLocale to switch language.
 *
 * @param {ParentNode & Partial<Element>} [root] defaults to document
 */
export function applyTranslations(root = document) {
  const selector = "[data-i18n], [data-i18n-attr]";
  const elements = [...root.querySelectorAll(selector)];
  if (typeof root.matches === "function" && root.matches(selector)) elements.unshift(root);
  for (const el of elements) {
    const params = elementParams(el);
    const key = el.getAttribute("data-i18n");
    if (key) el.textContent = t(key, params);
    for (const pair of (el.getAttribute("data-i18n-attr") || "").split(",")) {
      const at = pair.indexOf(":");
      if (at <= 0) continue;
      const name = pair.slice(0, at).trim();
      const attrKey = pair.slice(at + 1).trim();
      if (name && attrKey) el.setAttribute(name, t(attrKey, params));
    }
  }
}

/**
 * The placeholder names of a message (of all its plural forms), for tests
 * that compare catalogues.
 *
 * @param {string | Record<string, string>} message
 * @returns {string[]} sorted, without repeats
 */
export function placeholders(message) {
  const texts = typeof message === "object" && message !== null ? Object.values(message) : [String(message)];
  const names = new Set();
  for (const text of texts) for (const m of String(text).matchAll(/\{(\w+)\}/g)) names.add(m[1]);
  return [...names].sort();
}

function pluralForm(forms, language, count) {
  let category = "other";
  if (count !== undefined && count !== null && count !== "") {
    const n = typeof count === "bigint" ? count : Number(count);
    // PluralRules takes numbers; a BigInt beyond 2^53 is "other" in every
    // language we ship, as are all large numbers.
    if (typeof n === "bigint" || Number.isFinite(n)) {
      category = new Intl.PluralRules(language).select(typeof n === "bigint" ? Number(n) : n);
    }
  }
  return forms[category] ?? forms.other ?? "";
}

function fill(message, params) {
  return message.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!Object.hasOwn(params, name)) return whole;
    const value = params[name];
    if (typeof value === "bigint" || (typeof value === "number" && Number.isFinite(value))) {
      return new Intl.NumberFormat(getLocale()).format(value);
    }
    return String(value);
  });
}

function elementParams(el) {
  const raw = el.getAttribute("data-i18n-params");
  if (!raw) return {};
  try {
    const params = JSON.parse(raw);
    return params && typeof params === "object" ? params : {};
  } catch {
    return {};
  }
}

function primary(tag) {
  return typeof tag === "string" ? tag.split(/[-_]/)[0].toLowerCase() : "";
}

function browserLanguages() {
  if (typeof navigator === "undefined") return [];
  if (Array.isArray(navigator.languages) && navigator.languages.length) return navigator.languages;
  return navigator.language ? [navigator.language] : [];
}

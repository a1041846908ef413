// The "Accounts" part of the signed-in view: the customer's external
// accounts (GET /api/customers/external-accounts) and a form to add one
// (POST /api/customers/external-accounts; the BFF sets customerId from the
// cookie). Bank names for PHP, NGN and ZAR come from GET /api/discoveries.
//
// Every input carries data-field="<dot path>" with the body's path (e.g.
// accountInfo.beneficiary.address.postalCode), and its error element
// data-error-for="<the same path>", so that the field errors of the wasm
// validator (paywallet.validateAccountInfo, when the module has it) and of
// the service's 400 INVALID_INPUT (details.errors) land next to their input.
//
// Every time the list changes the section tells the rest of the page with a
// "wallet:accounts" event on document ({detail: {accounts}}); the Send and
// Transactions sections take their accounts from it. While an account is
// PENDING (the service is verifying it) the list is asked for again now and
// then, so that it turns Active without a click.
//
// Exported API, for the page and the views of router.js:
//
//   initAccounts({wallet, setStatus})  wires the section once, signed out.
//   showAccounts() / hideAccounts()    signed in / signed out: loads the list,
//                                      or forgets it and resets the form.
//   accountLabel(account)              "Ada Lovelace, US bank account •••• 5678".
//   holderName(account)                the account holder's (beneficiary's) name, or "".
//   recipientPath(id)                  "/recipients/<id>", the address of one recipient.
//   showRecipient(id, [container])     renders one recipient's facts (holder, type,
//                                      bank, last four, currency, country, status,
//                                      added) and its Remove with a confirmation step
//                                      into container; resolves to the account, or to
//                                      null when the person has no such recipient;
//                                      container defaults to #recipient-detail.
//
// Events on document: "wallet:accounts" {accounts} every time the list changes
// (removed, INACTIVE, accounts included: payments still name them);
// "wallet:account-added" {account} after the form added one, before focus
// moves to it in the list; "wallet:recipient-removed" {account} after a
// removal. Every recipient in #accounts-list is a link to recipientPath(id);
// removed ones are not listed.
//
// Bank names (GET /api/discoveries) are asked for only when signed in and
// while the form is on screen: the signed-out first page asks for nothing.

import { api, ApiError, messageOf } from "./api.js";
import { getLanguage, getLocale, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

// ---- the account types --------------------------------------------------------
//
// One table describes the form: for every account type its label, the
// currency it requires (null: the form asks, AED_ACCOUNT), the country used
// as a placeholder for the holder's address, and its fields besides
// accountType and beneficiary. COP and SLV have two shapes (bank transfer or
// mobile money), each with its own fields. Labels and the texts of options
// are functions that read the message catalogue (i18n.js) when the form is
// laid out; codes shown as they are (CPF, MTN) stay strings. A field is
//   {path, label, optional?, options?: [[value, text]], banks?: {country, currency},
//    inputMode?, autocomplete?, autocapitalize?,
//    maxLength?, spellcheck?, type?}
// banks: the bankName must be a discovery value, so it is a <select> filled
// from /api/discoveries (country may be left out: EUR banks of every country).

const ACCOUNT_KIND = [["CHECKING", () => t("recipients.form.kind.checking")], ["SAVINGS", () => t("recipients.form.kind.savings")]];
const choose = (label) => [["", label]];
const enumOptions = (values) => values.map((v) => [v, v]);

// A label or an option's text is a function that reads the catalogue when
// the form is laid out, so that the table can be built before the
// language's messages are loaded; text() reads one either way.
const text = (v) => (typeof v === "function" ? v() : String(v ?? ""));

const f = {
  accountNumber: (label, inputMode = "numeric") => ({ path: "accountInfo.accountNumber", label, inputMode }),
  bankName: (label, extra) => ({ path: "accountInfo.bankName", label, ...extra }),
  phone: (prefix) => ({
    path: "accountInfo.phoneNumber",
    label: () => t("recipients.form.field.phone", { prefix }),
    inputMode: "tel",
    autocomplete: "tel",
    placeholder: prefix,
  }),
  provider: (values) => ({
    path: "accountInfo.provider",
    label: () => t("recipients.form.field.provider"),
    options: choose(() => t("recipients.form.choose.provider")).concat(enumOptions(values)),
  }),
  iban: () => ({ path: "accountInfo.iban", label: () => t("recipients.form.field.iban"), autocapitalize: "characters", spellcheck: false }),
  swift: () => ({ path: "accountInfo.swiftCode", label: () => t("recipients.form.field.swift"), optional: true, autocapitalize: "characters", spellcheck: false }),
};

// Labels used by several types.
const L = {
  bank: () => t("recipients.form.field.bank"),
  provider: () => t("recipients.form.field.provider"),
  accountNumber: () => t("recipients.form.field.accountNumber"),
  // "Account number (8 digits)", "Account number (8 to 16 digits)"
  digits: (count) => () => t("recipients.form.field.accountNumberDigits", { count }),
  digitsBetween: (min, max) => () => t("recipients.form.field.accountNumberDigitsBetween", { min, max }),
  checkingOrSavings: () => t("recipients.form.field.bankAccountType"),
  notSpecified: () => t("recipients.form.choose.notSpecified"),
  chooseOne: () => t("recipients.form.choose.one"),
};

const mobileMoney = (label, currency, prefix, providers) => ({
  label,
  currency,
  fields: [f.phone(prefix), f.provider(providers)],
});

const bankShapes = (country, currency, mobileFields) => ({
  BANK: {
    label: () => t("recipients.form.shape.bank"),
    fields: [
      f.bankName(L.bank, { banks: { country, currency } }),
      f.accountNumber(L.accountNumber),
      { path: "accountInfo.bankAccountType", label: L.checkingOrSavings, options: choose(L.chooseOne).concat(ACCOUNT_KIND) },
    ],
  },
  MOBILE: { label: () => t("recipients.form.shape.mobile"), fields: mobileFields },
});

const TYPES = {
  USD_ACCOUNT: {
    label: () => t("recipients.type.usd"),
    currency: "USD",
    country: "US",
    fields: [
      f.accountNumber(L.accountNumber),
      { path: "accountInfo.routingNumber", label: () => t("recipients.form.field.routingNumber"), inputMode: "numeric" },
      { path: "accountInfo.bankAccountType", label: L.checkingOrSavings, optional: true, options: choose(L.notSpecified).concat(ACCOUNT_KIND) },
      f.bankName(L.bank, { optional: true, banks: { country: "US", currency: "USD" } }),
    ],
  },
  MXN_ACCOUNT: {
    label: () => t("recipients.type.mxn"),
    currency: "MXN",
    fields: [
      { path: "accountInfo.clabeNumber", label: () => t("recipients.form.field.clabe"), inputMode: "numeric" },
      f.bankName(L.bank, { optional: true, banks: { country: "MX", currency: "MXN" } }),
    ],
  },
  BRL_ACCOUNT: {
    label: () => t("recipients.type.brl"),
    currency: "BRL",
    fields: [
      { path: "accountInfo.pixKey", label: () => t("recipients.form.field.pixKey"), spellcheck: false },
      {
        path: "accountInfo.pixKeyType",
        label: () => t("recipients.form.field.pixKeyType"),
        options: choose(() => t("recipients.form.choose.keyType")).concat([
          ["CPF", "CPF"],
          ["CNPJ", "CNPJ"],
          ["EMAIL", () => t("recipients.form.pixKeyType.email")],
          ["PHONE", () => t("recipients.form.pixKeyType.phone")],
          ["RANDOM", () => t("recipients.form.pixKeyType.random")],
        ]),
      },
      { path: "accountInfo.taxId", label: () => t("recipients.form.field.cpfOrCnpj"), inputMode: "numeric" },
      f.bankName(L.bank, { optional: true, banks: { country: "BR", currency: "BRL" } }),
    ],
  },
  COP_ACCOUNT: {
    label: () => t("recipients.type.cop"),
    currency: "COP",
    shapes: bankShapes("CO", "COP", [f.bankName(L.provider, { banks: { country: "CO", currency: "COP" } }), f.phone("+57")]),
  },
  SLV_ACCOUNT: {
    label: () => t("recipients.type.slv"),
    currency: "USD",
    shapes: bankShapes("SV", "USD", [f.phone("+503"), f.bankName(L.provider, { optional: true, banks: { country: "SV", currency: "USD" } })]),
  },
  EUR_ACCOUNT: {
    label: () => t("recipients.type.eur"),
    currency: "EUR",
    country: "DE",
    fields: [
      f.iban(),
      f.swift(),
      f.bankName(L.bank, { optional: true, banks: { currency: "EUR" } }),
    ],
  },
  PHP_ACCOUNT: {
    label: () => t("recipients.type.php"),
    currency: "PHP",
    fields: [
      f.bankName(L.bank, { banks: { country: "PH", currency: "PHP" } }),
      f.accountNumber(L.digitsBetween(8, 16)),
    ],
  },
  GBP_ACCOUNT: {
    label: () => t("recipients.type.gbp"),
    currency: "GBP",
    country: "GB",
    fields: [
      { path: "accountInfo.sortCode", label: () => t("recipients.form.field.sortCode"), inputMode: "numeric" },
      f.accountNumber(L.digits(8)),
    ],
  },
  INR_ACCOUNT: {
    label: () => t("recipients.type.inr"),
    currency: "INR",
    fields: [{ path: "accountInfo.vpa", label: () => t("recipients.form.field.upiId"), inputMode: "email", autocapitalize: "off", spellcheck: false }],
  },
  NGN_ACCOUNT: {
    label: () => t("recipients.type.ngn"),
    currency: "NGN",
    fields: [
      f.bankName(L.bank, { banks: { country: "NG", currency: "NGN" } }),
      f.accountNumber(L.digits(10)),
    ],
  },
  ZAR_ACCOUNT: {
    label: () => t("recipients.type.zar"),
    currency: "ZAR",
    fields: [
      f.bankName(L.bank, { banks: { country: "ZA", currency: "ZAR" } }),
      f.accountNumber(L.digitsBetween(9, 13)),
    ],
  },
  KES_ACCOUNT: mobileMoney(() => t("recipients.type.kes"), "KES", "+254", ["M-PESA"]),
  TZS_ACCOUNT: mobileMoney(() => t("recipients.type.tzs"), "TZS", "+255", ["AIRTEL", "VODACOM"]),
  ZMW_ACCOUNT: mobileMoney(() => t("recipients.type.zmw"), "ZMW", "+260", ["TNM", "AIRTEL", "ZAMTEL", "MTN"]),
  RWF_ACCOUNT: mobileMoney(() => t("recipients.type.rwf"), "RWF", "+250", ["MTN", "AIRTEL"]),
  MWK_ACCOUNT: mobileMoney(() => t("recipients.type.mwk"), "MWK", "+265", ["AIRTEL", "TNM"]),
  UGX_ACCOUNT: mobileMoney(() => t("recipients.type.ugx"), "UGX", "+256", ["MTN", "AIRTEL"]),
  XOF_ACCOUNT: {
    label: () => t("recipients.type.xof"),
    currency: "XOF",
    fields: [
      { ...f.phone("+221"), label: () => t("recipients.form.field.phoneXof", { first: "+221", second: "+225", last: "+229" }) },
      f.provider(["MTN", "ORANGE", "WAVE", "MOOV", "FREE"]),
      {
        // TG is in the enum, but no Togo number is accepted: not offered.
        path: "accountInfo.region",
        label: () => t("recipients.form.field.country"),
        optional: true,
        regions: ["BJ", "CI", "SN"],
        options: choose(() => t("recipients.form.choose.fromPhone")),
      },
    ],
  },
  CAD_ACCOUNT: {
    label: () => t("recipients.type.cad"),
    currency: "CAD",
    country: "CA",
    fields: [
      { path: "accountInfo.bankCode", label: () => t("recipients.form.field.institutionNumber"), inputMode: "numeric" },
      { path: "accountInfo.branchCode", label: () => t("recipients.form.field.transitNumber"), inputMode: "numeric" },
      f.accountNumber(L.digitsBetween(7, 12)),
    ],
  },
  AED_ACCOUNT: {
    label: () => t("recipients.type.aed"),
    currency: null,
    defaultCurrency: "AED",
    country: "AE",
    fields: [f.iban(), f.swift()],
  },
  SPARK_WALLET: {
    label: () => t("recipients.type.spark"),
    currency: "BTC",
    wallet: true,
    fields: [{ path: "accountInfo.address", label: () => t("recipients.form.field.sparkAddress"), spellcheck: false, autocapitalize: "off" }],
  },
};

// ---- countries ------------------------------------------------------------------
//
// Country fields are lists of names in the language of the page's messages
// (Intl.DisplayNames; wordsLocale), sorted by name; the value sent is the ISO 3166-1 alpha-2 code. The service
// takes any assigned code for a holder's nationality and address
// (shared/accountrules countryCodes, the same 249 codes), so every one is offered.

const COUNTRY_CODES = (
  "ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZ" +
  "CACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZDEDJDKDMDODZECEEEGEHERESETFIFJFKFMFOFR" +
  "GAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHMHNHRHTHUIDIEILIMINIOIQIRISITJEJMJOJP" +
  "KEKGKHKIKMKNKPKRKWKYKZLALBLCLILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZ" +
  "NANCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURW" +
  "SASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZ" +
  "UAUGUMUSUYUZVAVCVEVGVIVNVUWFWSYEYTZAZMZW"
).match(/../g);

// wordsLocale is the locale of words the browser writes for the page
// (country names, month names): the language of the messages (i18n.js
// getLanguage), in the person's own variant of it when their number locale
// is one ("de-AT"), so that an English page does not name countries in
// French because the person reads numbers the French way.
function wordsLocale() {
  const language = getLanguage();
  const locale = getLocale();
  return locale.split("-")[0].toLowerCase() === language ? locale : language;
}

// Country names and their sorted list, for the locale they were made in.
const countries = { locale: "", names: null, list: null };

function countryCache() {
  const locale = wordsLocale();
  if (countries.locale !== locale) Object.assign(countries, { locale, names: null, list: null });
  return countries;
}

/** The name of a country code in the page's language (the code itself when unknown). */
function countryName(code) {
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

/** [[code, name]] of every country, sorted by name as the page's language sorts. */
function countryOptions() {
  const cache = countryCache();
  if (cache.list === null) {
    const collator = new Intl.Collator([cache.locale]);
    cache.list = COUNTRY_CODES.map((c) => [c, countryName(c)]).sort((a, b) => collator.compare(a[1], b[1]));
  }
  return cache.list;
}

const B = "accountInfo.beneficiary.";

const HOLDER_TYPE = {
  path: B + "beneficiaryType",
  label: () => t("recipients.form.field.holderType"),
  options: [["INDIVIDUAL", () => t("recipients.form.holderType.individual")], ["BUSINESS", () => t("recipients.form.holderType.business")]],
  required: true,
};

const INDIVIDUAL = [
  { path: B + "fullName", label: () => t("recipients.form.field.fullName"), autocomplete: "name", required: true },
  { path: B + "birthDate", label: () => t("recipients.form.field.birthDate"), type: "date", autocomplete: "bday" },
  { path: B + "nationality", label: () => t("recipients.form.field.nationality"), countries: true },
];

// Colombian individuals may give an identity document. The Colombian
// documents keep their Spanish names, which are what the holder calls them.
const DOCUMENT = [
  {
    path: B + "documentType",
    label: () => t("recipients.form.field.documentType"),
    options: choose(() => t("recipients.form.choose.noDocument")).concat([
      ["CC", "Cédula de ciudadanía (CC)"],
      ["CE", "Cédula de extranjería (CE)"],
      ["TI", "Tarjeta de identidad (TI)"],
      ["NIT", "NIT"],
      ["PP", () => t("recipients.form.document.passport")],
    ]),
  },
  { path: B + "documentNumber", label: () => t("recipients.form.field.documentNumber") },
];

const BUSINESS = [
  { path: B + "businessInfo.legalName", label: () => t("recipients.form.field.legalName"), autocomplete: "organization", required: true },
  { path: B + "businessInfo.registrationNumber", label: () => t("recipients.form.field.registrationNumber") },
  { path: B + "businessInfo.taxId", label: () => t("recipients.form.field.taxId") },
];

const ADDRESS = [
  { path: B + "address.line1", label: () => t("recipients.form.field.street"), autocomplete: "address-line1" },
  { path: B + "address.city", label: () => t("recipients.form.field.city"), autocomplete: "address-level2" },
  { path: B + "address.postalCode", label: () => t("recipients.form.field.postalCode"), autocomplete: "postal-code" },
  { path: B + "address.country", label: () => t("recipients.form.field.country"), autocomplete: "country", countries: true },
];

const CURRENCY = { path: "currency", label: () => t("recipients.form.field.currency"), autocapitalize: "characters", maxLength: 3, required: true };

// The parts of the body that have no input of their own, named for a
// person in the form's error line.
const OBJECT_NAMES = {
  "accountInfo.beneficiary": () => t("recipients.form.part.beneficiary"),
  "accountInfo.beneficiary.address": () => t("recipients.form.part.address"),
  "accountInfo.beneficiary.businessInfo": () => t("recipients.form.part.businessInfo"),
};

/** The badge text of a status ("" for none). */
function statusText(status) {
  switch (status) {
    case "PENDING":
      return t("recipients.status.pending");
    case "ACTIVE":
      return t("recipients.status.active");
    case "UNDER_REVIEW":
      return t("recipients.status.underReview");
    case "INACTIVE":
      return t("recipients.status.removed");
  }
  return humanize(status) || t("recipients.status.unknown");
}

/** What a person can do with an account in each status ("" when unknown). */
function statusAdvice(status) {
  switch (status) {
    case "PENDING":
      return t("recipients.advice.pending");
    case "ACTIVE":
      return t("recipients.advice.active");
    case "UNDER_REVIEW":
      return t("recipients.advice.underReview");
    case "INACTIVE":
      return t("recipients.advice.removed");
  }
  return "";
}

// Where an account's primary identifier is, by preference.
const PRIMARY = ["accountNumber", "iban", "clabeNumber", "phoneNumber", "address", "pixKey", "vpa"];

const ctx = {
  wallet: () => Promise.reject(new Error("no wallet")),
  setStatus: () => {},
  shown: false,
  formDrawn: false, // the add form's fields are drawn (showRecipientForm)
  loading: 0, // generation of the list being loaded
  banks: new Map(), // "PH/PHP" -> Promise<[{bankName, displayName}]>
  shapes: {}, // accountType -> the chosen shape (COP and SLV: BANK or MOBILE)
  rendering: 0, // generation of the laid-out fields
  touched: new Set(), // data-field paths checked as the person types
  live: 0, // generation of the check as the person types
  liveTimer: 0,
  list: [], // the accounts shown
  pendingTimer: 0, // the next look at PENDING accounts
  pendingDelay: 0, // ms until then; grows while they stay PENDING
  language: "", // the language the form was laid out in
};

// While an account is PENDING, the list is asked for again after these
// delays (ms), the last one repeating.
const PENDING_DELAYS = [1000, 2000, 3000, 5000, 10000, 30000];

/**
 * Wires the section once.
 *
 * @param {{wallet: () => Promise<object>, setStatus: (text: string) => void}} options
 */
export function initAccounts({ wallet, setStatus }) {
  ctx.wallet = wallet;
  ctx.setStatus = setStatus;
  $("account-type").replaceChildren(...typeOptions());
  $("account-type").value = "USD_ACCOUNT";
  $("account-type").addEventListener("change", renderFields);
  $("account-fields").addEventListener("change", onFieldsChange);
  $("account-fields").addEventListener("input", onFieldInput);
  $("account-fields").addEventListener("focusout", onFieldLeave);
  $("add-account").addEventListener("submit", onSubmit);
  $("accounts-refresh").addEventListener("click", () => loadAccounts());
  // The form coming on screen (its section or view shown) is when its bank
  // lists are needed.
  if (typeof ResizeObserver === "function") new ResizeObserver(loadBanksWhenNeeded).observe($("add-account"));
  // The form's fields are drawn when it is first shown (showRecipientForm):
  // built here, they were the largest piece of the page's start.
}

/**
 * Draws the add-recipient form's fields if they are not drawn yet (or were
 * drawn in another language); the page calls it when the form's view is
 * shown.
 */
export function showRecipientForm() {
  if (!ctx.formDrawn || ctx.language !== getLanguage()) renderFields();
  loadBanksWhenNeeded();
}

/** Shows the section; the list is (re)loaded when it was hidden. */
export function showAccounts() {
  $("accounts").hidden = false;
  // The messages' language may have been chosen after initAccounts: the
  // form is written again in it, keeping what was typed.
  if (ctx.language !== getLanguage()) {
    const type = currentType();
    $("account-type").replaceChildren(...typeOptions());
    $("account-type").value = type;
    if (ctx.formDrawn) renderFields();
  }
  if (!ctx.shown) {
    ctx.shown = true;
    loadAccounts();
  }
  loadBanksWhenNeeded();
}

/** Hides the section and forgets what it showed (another person may sign in). */
export function hideAccounts() {
  ctx.shown = false;
  ctx.loading++;
  clearTimeout(ctx.pendingTimer);
  ctx.pendingTimer = 0;
  ctx.pendingDelay = 0;
  ctx.list = [];
  $("accounts").hidden = true;
  $("accounts-list").replaceChildren();
  $("accounts-empty").hidden = true;
  $("accounts-error").hidden = true;
  resetForm();
}

// ---- list -------------------------------------------------------------------

async function loadAccounts() {
  const generation = ++ctx.loading;
  const errorEl = $("accounts-error");
  errorEl.hidden = true;
  try {
    const all = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const q = new URLSearchParams({ limit: "100" });
      if (cursor) q.set("cursor", cursor);
      const { data } = await api("GET", "/api/customers/external-accounts?" + q);
      if (generation !== ctx.loading) return;
      const items = data && Array.isArray(data.data) ? data.data : [];
      all.push(...items);
      if (!data.hasMore || typeof data.nextCursor !== "string" || data.nextCursor === "") break;
      cursor = data.nextCursor;
    }
    const listed = all.filter(listable);
    $("accounts-list").replaceChildren(...listed.map(accountItem));
    $("accounts-empty").hidden = listed.length > 0;
    listChanged(all);
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    errorEl.textContent = t("recipients.list.error.load", { reason: sentence(messageOf(err)), refresh: buttonName("accounts-refresh") });
    errorEl.hidden = false;
  }
}

// listable: removed (INACTIVE) accounts are kept for the payments that
// name them, but are no longer recipients.
const listable = (a) => a && a.status !== "INACTIVE";

function addToList(account) {
  const list = $("accounts-list");
  const old = [...list.children].find((el) => el.dataset.id === account.id);
  if (!listable(account)) {
    if (old) old.remove();
  } else if (old) {
    old.replaceWith(accountItem(account));
  } else {
    list.append(accountItem(account));
  }
  $("accounts-empty").hidden = list.children.length > 0;
  ctx.pendingDelay = 0; // a new account: look at it again soon
  listChanged(ctx.list.filter((a) => a.id !== account.id).concat([account]));
}

// listChanged keeps the list, tells the page, and looks again later while
// an account is PENDING.
function listChanged(list) {
  ctx.list = list;
  document.dispatchEvent(new CustomEvent("wallet:accounts", { detail: { accounts: list.slice() } }));
  clearTimeout(ctx.pendingTimer);
  ctx.pendingTimer = 0;
  if (!ctx.shown || !list.some((a) => a && a.status === "PENDING")) {
    ctx.pendingDelay = 0;
    return;
  }
  const i = PENDING_DELAYS.indexOf(ctx.pendingDelay);
  ctx.pendingDelay = PENDING_DELAYS[Math.min(i + 1, PENDING_DELAYS.length - 1)];
  ctx.pendingTimer = setTimeout(() => {
    ctx.pendingTimer = 0;
    if (ctx.shown) loadAccounts();
  }, ctx.pendingDelay);
}

/**
 * Names an external account for a person: its kind and the last four
 * characters of its number, after the holder's name when it has one, e.g.
 * "Ada Lovelace, US bank account •••• 5678".
 *
 * @param {object} account an ExternalAccount
 * @returns {string}
 */
export function accountLabel(account) {
  const info = (account && account.accountInfo) || {};
  const last4 = lastFour(info);
  const label = last4 ? t("recipients.account.kindAndNumber", { kind: kindOf(info), last4 }) : kindOf(info);
  const name = holderName(account);
  return name ? t("recipients.account.holderAndKind", { holder: name, account: label }) : label;
}

/**
 * The name of the account's holder (its beneficiary): the full name of a
 * person or the legal name of a business; "" for a wallet or a holder
 * without a name.
 *
 * @param {object} account an ExternalAccount
 * @returns {string}
 */
export function holderName(account) {
  const info = (account && account.accountInfo) || {};
  const b = info.beneficiary || {};
  if (typeof b.fullName === "string" && b.fullName.trim()) return b.fullName.trim();
  const legal = b.businessInfo && b.businessInfo.legalName;
  return typeof legal === "string" ? legal.trim() : "";
}

/**
 * The address of one recipient's view, e.g. "/recipients/ExternalAccount:0199…".
 *
 * @param {string} id an ExternalAccount id
 * @returns {string}
 */
export function recipientPath(id) {
  return "/recipients/" + pathSegment(id);
}

// pathSegment puts an id in a path as it is ("ExternalAccount:0199…"): the
// BFF matches ids unescaped, so only characters no id has are escaped.
function pathSegment(id) {
  return String(id).replace(/[^A-Za-z0-9:._-]/g, encodeURIComponent);
}

function kindOf(info) {
  return (TYPES[info.accountType] && text(TYPES[info.accountType].label)) || humanize(info.accountType) || t("recipients.account.kindUnknown");
}

// accountItem is one recipient of the list: a link to its view, named by
// the holder, the kind of account, its currency and last four characters,
// then its status.
function accountItem(account) {
  const info = (account && account.accountInfo) || {};
  const li = document.createElement("li");
  li.className = "account";
  li.dataset.id = String(account.id || "");
  li.dataset.status = String(account.status || "");

  const link = document.createElement("a");
  link.className = "account-link";
  link.href = recipientPath(account.id || "");
  const main = document.createElement("span");
  main.className = "account-main";
  const name = holderName(account);
  if (name) {
    const holder = document.createElement("span");
    holder.className = "account-holder";
    holder.textContent = name;
    main.append(holder, " ");
  }
  const type = document.createElement("span");
  type.className = "account-kind";
  type.textContent = kindOf(info);
  const currency = document.createElement("span");
  currency.className = "account-currency";
  currency.textContent = String(account.currency || "");
  main.append(type, " ", currency);

  const ident = document.createElement("span");
  ident.className = "account-ident";
  const last4 = lastFour(info);
  if (last4) {
    // Read as "… 5678", not as four bullets.
    const dots = document.createElement("span");
    dots.setAttribute("aria-hidden", "true");
    dots.textContent = "•••• ";
    ident.append(" ", dots, last4);
  }
  link.append(main, ident);

  const badge = document.createElement("span");
  const status = String(account.status || "");
  badge.className = "badge badge-" + status.toLowerCase().replaceAll("_", "-");
  badge.textContent = statusText(status);

  li.append(link, " ", badge);
  return li;
}

function lastFour(info) {
  for (const key of PRIMARY) {
    const v = info[key];
    if (typeof v === "string" && v !== "") return v.slice(-4);
  }
  return "";
}

// ---- one recipient ----------------------------------------------------------------

/**
 * Renders one recipient into container: its facts (holder, type, bank,
 * last four, currency, country, status, date added) and, unless it was
 * removed already, "Remove recipient", which asks for a confirmation
 * first. Uses the loaded list, or asks the BFF for the account (a deep
 * link before the list is in).
 *
 * @param {string} id an ExternalAccount id
 * @param {HTMLElement} [container] emptied and filled; #recipient-detail
 *   when not given
 * @returns {Promise<object|null>} the account, or null when the person has
 *   none with this id (container then says so)
 */
export async function showRecipient(id, container = $("recipient-detail")) {
  const generation = (container.dataset.generation = String(Number(container.dataset.generation || 0) + 1));
  let account = ctx.list.find((a) => a && a.id === id) || null;
  if (!account) {
    container.replaceChildren(paragraph("hint", t("recipients.detail.loading")));
    try {
      const { data } = await api("GET", "/api/customers/external-accounts/" + pathSegment(id));
      account = data && data.id ? data : null;
    } catch (err) {
      if (container.dataset.generation !== generation) return null;
      if (err instanceof ApiError && err.status === 401) return null; // the page signs out
      if (!(err instanceof ApiError && err.status === 404)) {
        const p = paragraph("form-error", t("recipients.detail.error.load", { reason: sentence(messageOf(err)) }));
        p.setAttribute("role", "alert");
        container.replaceChildren(p);
        return null;
      }
    }
    if (container.dataset.generation !== generation) return null;
  }
  if (!account) {
    // The message has a {link} where the link to the list goes.
    const [before, after = ""] = t("recipients.detail.notFound").split("{link}");
    const p = paragraph("notice", before);
    const back = document.createElement("a");
    back.href = "/recipients";
    back.textContent = t("recipients.detail.notFoundLink");
    p.append(back, after);
    container.replaceChildren(p);
    return null;
  }
  renderRecipient(account, container);
  return account;
}

function renderRecipient(account, container) {
  const info = account.accountInfo || {};
  const b = info.beneficiary || {};
  const facts = document.createElement("dl");
  facts.className = "facts recipient-facts";
  const fact = (term, value, name) => {
    if (!value) return;
    const row = document.createElement("div");
    row.dataset.fact = name;
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value;
    row.append(dt, dd);
    facts.append(row);
  };
  const status = String(account.status || "");
  const badge = document.createElement("span");
  badge.className = "badge badge-" + status.toLowerCase().replaceAll("_", "-");
  badge.textContent = statusText(status);

  const wallet = TYPES[info.accountType] && TYPES[info.accountType].wallet;
  fact(t("recipients.detail.holder"), holderName(account) || (wallet ? "" : t("recipients.detail.holderNotGiven")), "holder");
  fact(t("recipients.detail.type"), kindOf(info), "type");
  fact(t("recipients.detail.bank"), typeof info.bankName === "string" ? info.bankName : "", "bank");
  const last4 = lastFour(info);
  fact(t("recipients.detail.number"), last4 ? t("recipients.detail.endingIn", { last4 }) : "", "number");
  fact(t("recipients.detail.currency"), String(account.currency || ""), "currency");
  fact(t("recipients.detail.country"), countryName(countryOf(account)), "country");
  fact(t("recipients.detail.status"), badge, "status");
  fact(t("recipients.detail.added"), dateText(account.createdAt), "added");

  const advice = paragraph("hint recipient-advice", statusAdvice(status));
  const error = paragraph("form-error", "");
  error.setAttribute("role", "alert");
  error.hidden = true;
  const result = paragraph("notice", "");
  result.setAttribute("role", "status");
  result.tabIndex = -1;
  result.hidden = true;
  const parts = [facts, advice, error, result];

  if (status !== "INACTIVE") {
    const label = accountLabel(account);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "secondary";
    remove.dataset.action = "remove";
    remove.textContent = t("recipients.remove.button");

    const confirm = document.createElement("div");
    confirm.className = "confirm";
    confirm.setAttribute("role", "group");
    confirm.hidden = true;
    const question = paragraph("", t("recipients.remove.question", { recipient: label }));
    question.id = "recipient-confirm-" + String(account.id).replace(/[^A-Za-z0-9_-]/g, "-");
    confirm.setAttribute("aria-labelledby", question.id);
    const yes = document.createElement("button");
    yes.type = "button";
    yes.dataset.action = "confirm-remove";
    yes.textContent = t("recipients.remove.confirm");
    const no = document.createElement("button");
    no.type = "button";
    no.className = "secondary";
    no.dataset.action = "cancel-remove";
    no.textContent = t("recipients.remove.cancel");
    confirm.append(question, yes, " ", no);

    remove.addEventListener("click", () => {
      error.hidden = true;
      remove.hidden = true;
      confirm.hidden = false;
      no.focus(); // the safe choice first; the group's label asks the question
    });
    no.addEventListener("click", () => {
      confirm.hidden = true;
      remove.hidden = false;
      remove.focus();
    });
    yes.addEventListener("click", async () => {
      yes.disabled = no.disabled = true;
      yes.setAttribute("aria-busy", "true");
      error.hidden = true;
      try {
        await api("DELETE", "/api/customers/external-accounts/" + pathSegment(account.id));
      } catch (err) {
        yes.disabled = no.disabled = false;
        yes.removeAttribute("aria-busy");
        if (err instanceof ApiError && err.status === 401) return; // the page signs out
        confirm.hidden = true;
        remove.hidden = false;
        error.textContent =
          err instanceof ApiError && err.status === 404
            ? t("recipients.remove.error.gone")
            : t("recipients.remove.error.failed", { reason: sentence(messageOf(err)) });
        error.hidden = false;
        remove.focus();
        return;
      }
      const removed = { ...account, status: "INACTIVE" };
      addToList(removed);
      document.dispatchEvent(new CustomEvent("wallet:recipient-removed", { detail: { account: removed } }));
      renderRecipient(removed, container);
      const done = container.querySelector("[role=status]");
      done.textContent = t("recipients.remove.done", { recipient: label });
      done.hidden = false;
      done.focus();
      ctx.setStatus(t("recipients.remove.status"));
    });
    parts.push(remove, confirm);
  }
  container.replaceChildren(...parts);
}

// countryOf is the country an account pays into, as far as it says: the
// holder's address, the XOF region, or the country of its type.
function countryOf(account) {
  const info = account.accountInfo || {};
  const address = (info.beneficiary && info.beneficiary.address) || {};
  if (typeof address.country === "string" && address.country) return address.country;
  if (typeof info.region === "string" && info.region) return info.region;
  const spec = TYPES[info.accountType];
  return (spec && spec.country) || "";
}

function dateText(iso) {
  const time = typeof iso === "string" ? Date.parse(iso) : NaN;
  if (!Number.isFinite(time)) return "";
  return new Date(time).toLocaleDateString(wordsLocale(), { dateStyle: "long" });
}

function paragraph(className, text) {
  const p = document.createElement("p");
  if (className) p.className = className;
  p.textContent = text;
  return p;
}

// ---- form -------------------------------------------------------------------

function currentType() {
  const type = $("account-type").value;
  return TYPES[type] ? type : "USD_ACCOUNT";
}

function currentShape(type) {
  const shapes = TYPES[type].shapes;
  if (!shapes) return "";
  const s = ctx.shapes[type];
  return shapes[s] ? s : Object.keys(shapes)[0];
}

function accountFields(type) {
  const spec = TYPES[type];
  return spec.shapes ? spec.shapes[currentShape(type)].fields : spec.fields;
}

function typeOptions() {
  return Object.entries(TYPES).map(
    ([type, spec]) => new Option(t("recipients.form.typeOption", { type: text(spec.label), currency: spec.currency || spec.defaultCurrency }), type),
  );
}

// onFieldsChange re-lays the form when the shape or the holder type
// changes, and asks again which holder fields are required when the
// currency (AED_ACCOUNT) does.
function onFieldsChange(event) {
  const el = event.target;
  if (el.id === "account-shape") {
    ctx.shapes[currentType()] = el.value;
    renderFields();
  } else if (el.dataset && el.dataset.field === HOLDER_TYPE.path) {
    renderFields();
  } else if (el.dataset && el.dataset.field === "currency") {
    applyRequired(++ctx.rendering);
  }
}

// renderFields lays out the inputs of the chosen type, keeping what was
// typed into fields the new type has too (the beneficiary, say). The
// holder's address is shown as optional until the wallet module says
// whether this type requires it (applyRequired).
function renderFields() {
  const box = $("account-fields");
  const kept = {};
  for (const el of box.querySelectorAll("[data-field]")) kept[el.dataset.field] = el.value;

  const type = currentType();
  const spec = TYPES[type];
  ctx.language = getLanguage();
  ctx.formDrawn = true;
  const details = fieldset(t("recipients.form.section.account"));
  if (spec.shapes) details.append(shapeRow(type));
  if (spec.currency) {
    const note = document.createElement("p");
    note.className = "hint field";
    note.id = "account-currency";
    note.textContent = t("recipients.form.currencyFixed", { currency: spec.currency });
    details.append(note);
  } else {
    details.append(fieldRow(CURRENCY, true));
  }
  for (const fl of accountFields(type)) details.append(fieldRow(fl, !fl.optional));
  const parts = [details];

  if (!spec.wallet) {
    const business = kept[HOLDER_TYPE.path] === "BUSINESS";
    const holder = fieldset(t("recipients.form.section.holder"));
    holder.append(fieldRow(HOLDER_TYPE, true));
    const members = business ? BUSINESS : type === "COP_ACCOUNT" ? INDIVIDUAL.concat(DOCUMENT) : INDIVIDUAL;
    for (const fl of members) holder.append(fieldRow(fl, !!fl.required));
    const address = fieldset(t("recipients.form.section.address"));
    address.id = "acct-address";
    for (const fl of ADDRESS) address.append(fieldRow(fl, false));
    parts.push(holder, address);
  }
  box.replaceChildren(...parts);

  for (const el of box.querySelectorAll("[data-field]")) {
    const v = kept[el.dataset.field];
    if (v !== undefined && el.tagName === "INPUT") el.value = v;
    if (v !== undefined && el.tagName === "SELECT" && [...el.options].some((o) => o.value === v)) el.value = v;
    if (el.dataset.field === "currency" && el.value === "") el.value = spec.defaultCurrency || "";
  }
  ctx.touched.clear();
  clearTimeout(ctx.liveTimer);
  ctx.live++;
  delete $("add-account").dataset.checking;
  clearErrors();
  applyRequired(++ctx.rendering);
  loadBanksWhenNeeded();
}

function shapeRow(type) {
  const row = document.createElement("div");
  row.className = "field";
  const label = document.createElement("label");
  label.htmlFor = "account-shape";
  label.textContent = t("recipients.form.field.shape");
  const select = document.createElement("select");
  select.id = "account-shape";
  select.name = "shape";
  for (const [key, shape] of Object.entries(TYPES[type].shapes)) select.append(new Option(text(shape.label), key));
  select.value = currentShape(type);
  row.append(label, select);
  return row;
}

// applyRequired asks the wallet module which holder fields the type
// requires (paywallet.requiredBeneficiaryFields), marks them, and shows the
// address only when it is required. Without the module nothing changes:
// the address stays, optional, and the service decides.
async function applyRequired(generation) {
  const type = currentType();
  const spec = TYPES[type];
  if (spec.wallet) return;
  const wallet = await walletWithin(15000);
  if (!wallet || typeof wallet.requiredBeneficiaryFields !== "function" || generation !== ctx.rendering) return;
  const holderType = fieldValue(HOLDER_TYPE.path) || "INDIVIDUAL";
  const currency = spec.currency || fieldValue("currency");
  let list;
  try {
    list = await wallet.requiredBeneficiaryFields(type, currency, holderType);
  } catch {
    return;
  }
  if (generation !== ctx.rendering || !Array.isArray(list)) return;
  const required = new Set(list.map((p) => B + p));
  const box = $("account-fields");
  for (const el of box.querySelectorAll('[data-field^="' + B + '"]')) {
    markRequired(el, el.dataset.field === HOLDER_TYPE.path || required.has(el.dataset.field));
  }
  const address = $("acct-address");
  if (address) {
    const need = required.has(B + "address");
    address.hidden = !need;
    address.dataset.required = String(need);
    for (const el of address.querySelectorAll("[data-field]")) el.disabled = !need;
  }
}

async function walletWithin(ms) {
  let timer;
  try {
    return await Promise.race([ctx.wallet(), new Promise((_, reject) => (timer = setTimeout(reject, ms)))]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

function fieldValue(path) {
  const el = $("account-fields").querySelector('[data-field="' + CSS.escape(path) + '"]');
  return el && !el.disabled ? el.value.trim() : "";
}

function markRequired(input, required) {
  if (required) input.setAttribute("aria-required", "true");
  else input.removeAttribute("aria-required");
  const mark = document.querySelector('label[for="' + CSS.escape(input.id) + '"] .optional');
  if (mark) mark.hidden = required;
}

function fieldset(legendText) {
  const fs = document.createElement("fieldset");
  const legend = document.createElement("legend");
  legend.textContent = legendText;
  fs.append(legend);
  return fs;
}

function fieldRow(f, required) {
  const id = "acct-" + f.path.replaceAll(".", "-");
  const row = document.createElement("div");
  row.className = "field";
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = text(f.label);
  const optional = document.createElement("span");
  optional.className = "optional";
  optional.textContent = " " + t("recipients.form.optional");
  optional.hidden = required;
  label.append(optional);

  let input;
  if (f.countries) {
    input = document.createElement("select");
    input.autocomplete = f.autocomplete || "off";
    input.append(new Option(t("recipients.form.choose.country"), ""));
    for (const [code, name] of countryOptions()) input.append(new Option(name, code));
  } else if (f.options || f.banks) {
    input = document.createElement("select");
    for (const [value, label] of f.options || [["", () => t("recipients.form.banks.loading")]]) input.append(new Option(text(label), value));
    for (const code of f.regions || []) input.append(new Option(countryName(code), code));
    if (f.banks) {
      // Filled by loadBanksWhenNeeded once signed in and on screen.
      input.dataset.banksPending = "true";
      input.dataset.bankCountry = f.banks.country || "";
      input.dataset.bankCurrency = f.banks.currency;
      input.dataset.bankOptional = String(!required);
    }
  } else {
    input = document.createElement("input");
    input.type = f.type || "text";
    input.autocomplete = f.autocomplete || "off";
    if (f.inputMode) input.inputMode = f.inputMode;
    if (f.maxLength) input.maxLength = f.maxLength;
    if (f.autocapitalize) input.setAttribute("autocapitalize", f.autocapitalize);
    if (f.spellcheck === false) input.spellcheck = false;
    if (f.placeholder) input.placeholder = f.placeholder;
  }
  input.id = id;
  input.name = f.path;
  input.dataset.field = f.path;
  input.setAttribute("aria-describedby", id + "-error");
  if (required) input.setAttribute("aria-required", "true");

  const error = document.createElement("p");
  error.className = "field-error";
  error.id = id + "-error";
  error.dataset.errorFor = f.path;
  error.hidden = true;

  row.append(label, input, error);
  return row;
}

// loadBanksWhenNeeded fills the bank lists of the form once the person is
// signed in and the form is on screen. Before, the signed-out first page
// asked for them, got a 401, and said "Could not load the list of banks:
// not signed in".
// formOnScreen reports whether the add-recipient form is laid out on screen.
function formOnScreen() {
  return $("add-account").getClientRects().length > 0;
}

function loadBanksWhenNeeded() {
  if (!ctx.shown || !formOnScreen()) return;
  for (const select of $("account-fields").querySelectorAll("select[data-banks-pending]")) {
    delete select.dataset.banksPending;
    const { bankCountry: country, bankCurrency: currency, bankOptional } = select.dataset;
    fillBanks(select, { country, currency }, bankOptional === "true");
  }
}

// fillBanks puts the discovery's bank names into a <select>: the value is
// the exact bankName the service requires, the text its display name.
async function fillBanks(select, { country, currency }, optional) {
  const key = (country || "") + "/" + currency;
  if (!ctx.banks.has(key)) {
    const q = new URLSearchParams(country ? { country, currency } : { currency });
    const p = api("GET", "/api/discoveries?" + q).then(({ data }) => (data && Array.isArray(data.data) ? data.data : []));
    p.catch(() => ctx.banks.delete(key)); // try again next time
    ctx.banks.set(key, p);
  }
  try {
    const banks = await ctx.banks.get(key);
    const first = !banks.length ? t("recipients.form.banks.none") : optional ? t("recipients.form.choose.notSpecified") : t("recipients.form.choose.one");
    const options = [new Option(first, "")];
    for (const b of banks) {
      if (b && typeof b.bankName === "string") options.push(new Option(b.displayName || b.bankName, b.bankName));
    }
    select.replaceChildren(...options);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    select.replaceChildren(new Option(t("recipients.form.banks.failed"), ""));
    select.dataset.banksPending = "true"; // asked for again when the form is laid out or shown again
    formError(t("recipients.form.error.banks", { reason: sentence(messageOf(err)) }));
  }
}

// buildBody is the create body from the form: currency, and accountInfo
// with accountType, the non-empty fields and, for fiat types, the
// beneficiary (with businessInfo for a business, and the address where the
// type requires one) even when empty, so that every missing field is
// reported on its own input. An optional address goes only when filled in.
function buildBody() {
  const type = currentType();
  const spec = TYPES[type];
  const body = { accountInfo: { accountType: type } };
  if (spec.currency) body.currency = spec.currency;
  if (!spec.wallet) {
    const beneficiary = (body.accountInfo.beneficiary = {});
    if (fieldValue(HOLDER_TYPE.path) === "BUSINESS") beneficiary.businessInfo = {};
    const address = $("acct-address");
    if (address && address.dataset.required === "true") beneficiary.address = {};
  }
  for (const el of $("account-fields").querySelectorAll("[data-field]")) {
    const value = el.value.trim();
    if (value !== "" && !el.disabled) setPath(body, el.dataset.field, value);
  }
  return body;
}

function setPath(obj, path, value) {
  const keys = path.split(".");
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== "object" || cur[k] === null) cur[k] = {};
    cur = cur[k];
  }
  cur[keys[keys.length - 1]] = value;
}

async function onSubmit(event) {
  event.preventDefault();
  clearTimeout(ctx.liveTimer);
  ctx.live++;
  delete $("add-account").dataset.checking;
  clearErrors();
  // From now on every field is checked again as it is corrected.
  for (const el of $("account-fields").querySelectorAll("[data-field]")) ctx.touched.add(el.dataset.field);
  const body = buildBody();
  const button = $("account-submit");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    const local = await validateLocally(body);
    if (local.length > 0) {
      showErrors(local);
      return;
    }
    let res;
    try {
      res = await api("POST", "/api/customers/external-accounts", { body });
    } catch (err) {
      if (err instanceof ApiError && err.details && Array.isArray(err.details.errors) && err.details.errors.length) {
        showErrors(err.details.errors, t("recipients.form.error.fields"));
      } else if (err instanceof ApiError && err.status === 409) {
        formError(duplicateText(body));
      } else if (!(err instanceof ApiError && err.status === 401)) {
        formError(t("recipients.form.error.failed", { reason: sentence(messageOf(err)) }));
      }
      return;
    }
    const account = res.data && res.data.id ? res.data : null;
    if (account) addToList(account);
    resetForm();
    if (!account) {
      ctx.setStatus(t("recipients.form.added"));
      return;
    }
    // Focus goes to the new account in the list, which names it; the status
    // line says what happens next. (A view that shows the list elsewhere
    // switches to it on this event, before focus moves.)
    document.dispatchEvent(new CustomEvent("wallet:account-added", { detail: { account } }));
    const advice = statusAdvice(account.status);
    const recipient = accountLabel(account);
    ctx.setStatus(advice ? t("recipients.form.addedNamed", { recipient, advice }) : t("recipients.form.addedNamedOnly", { recipient }));
    focusListed(account.id);
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
    // A disabled button loses focus to the page's top; give it back.
    if (!document.activeElement || document.activeElement === document.body) button.focus();
  }
}

// focusListed moves focus to the account's link in the list, when the list
// is on screen; otherwise to the start of the form, to add another.
function focusListed(id) {
  const li = [...$("accounts-list").children].find((el) => el.dataset.id === id);
  const link = li && li.querySelector("a");
  if (link && link.getClientRects().length > 0) {
    link.focus();
    if (document.activeElement === link) return;
  }
  $("account-type").focus();
}

// duplicateText is the 409 answer for an account the person already has
// (the service keeps one account per destination, removed ones included).
function duplicateText(body) {
  const info = body.accountInfo || {};
  const key = PRIMARY.find((k) => typeof info[k] === "string" && info[k] !== "");
  const same = key && ctx.list.find((a) => a && a.accountInfo && a.accountInfo.accountType === info.accountType && a.accountInfo[key] === info[key]);
  if (same && same.status === "INACTIVE") {
    return t("recipients.form.error.duplicateRemoved");
  }
  if (same) return t("recipients.form.error.duplicateOf", { recipient: accountLabel(same) });
  return t("recipients.form.error.duplicate");
}

// validateLocally runs the wasm module's validator when the module has it
// (and answers within a few seconds); otherwise it reports nothing and the
// service decides.
async function validateLocally(body) {
  const wallet = await walletWithin(3000);
  if (!wallet || typeof wallet.validateAccountInfo !== "function") return [];
  try {
    const errors = await wallet.validateAccountInfo(body);
    return Array.isArray(errors) ? errors.filter((e) => e && typeof e.field === "string") : [];
  } catch {
    return []; // a broken validator must not block the form; the service checks too
  }
}

// ---- checks as the person types ------------------------------------------------
//
// A field is checked with the wallet module's validator once the person
// leaves it with something in it (or picks a value in a list), and from then
// on again as they type: a routing number is not called wrong after its first
// digit, and is called right as soon as it is. Only such touched fields show
// errors before a submit; the submit shows all of them.

function onFieldInput(event) {
  const el = event.target;
  const field = el.dataset && el.dataset.field;
  if (!field) return;
  if (el.tagName === "SELECT") ctx.touched.add(field);
  if (ctx.touched.has(field)) scheduleLiveCheck(200);
}

function onFieldLeave(event) {
  const el = event.target;
  const field = el.dataset && el.dataset.field;
  if (!field) return;
  // Leaving for the submit button: the submit checks everything, and an
  // error shown or hidden now would move the button under the pointer.
  if (event.relatedTarget && event.relatedTarget.id === "account-submit") return;
  if (!ctx.touched.has(field) && el.value.trim() === "") return; // passing through is not an error yet
  ctx.touched.add(field);
  scheduleLiveCheck(0);
}

// While a check is scheduled or running the form carries data-checking, so
// that tests (and styles) can wait for it to settle.
function scheduleLiveCheck(ms) {
  clearTimeout(ctx.liveTimer);
  $("add-account").dataset.checking = "true";
  ctx.liveTimer = setTimeout(liveCheck, ms);
}

async function liveCheck() {
  const generation = ++ctx.live;
  let errors;
  try {
    errors = await validateLocally(buildBody());
  } finally {
    if (generation === ctx.live) delete $("add-account").dataset.checking;
  }
  if (generation !== ctx.live) return;
  const first = new Map();
  for (const e of errors) if (!first.has(e.field)) first.set(e.field, e.message);
  for (const field of ctx.touched) setFieldError(field, first.get(field));
}

// setFieldError shows message under the input of field, or clears it when
// message is undefined.
function setFieldError(field, message) {
  const form = $("add-account");
  const el = form.querySelector('[data-error-for="' + CSS.escape(field) + '"]');
  const input = form.querySelector('[data-field="' + CSS.escape(field) + '"]');
  if (!el) return;
  if (message === undefined) {
    el.hidden = true;
    el.textContent = "";
    if (input) input.removeAttribute("aria-invalid");
    return;
  }
  el.textContent = sentence(message);
  el.hidden = false;
  if (input) input.setAttribute("aria-invalid", "true");
}

// resetForm empties the form; its fields are drawn again at once if it is
// on screen, else when it is next shown.
function resetForm() {
  const type = currentType();
  $("add-account").reset();
  $("account-type").value = type;
  $("account-fields").replaceChildren();
  ctx.formDrawn = false;
  if (formOnScreen()) renderFields();
}

// ---- errors -----------------------------------------------------------------

function clearErrors() {
  const form = $("add-account");
  for (const el of form.querySelectorAll("[data-error-for]")) {
    el.hidden = true;
    el.textContent = "";
  }
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  $("account-form-error").hidden = true;
  $("account-form-error").textContent = "";
}

// showErrors puts each {field, message} next to its input; those without
// one (currency, a whole object) go to the form's error line.
function showErrors(errors, fallback) {
  const form = $("add-account");
  const rest = [];
  let first = null;
  for (const e of errors) {
    const field = String(e.field || "");
    const el = field && form.querySelector('[data-error-for="' + CSS.escape(field) + '"]');
    if (!el) {
      if (!field) rest.push(sentence(e.message));
      else if (typeof e.message === "string" && e.message.trim() !== "") {
        rest.push(t("recipients.form.error.check", { field: labelOf(field), problem: e.message.trim().replace(/[.!?]$/, "") }));
      } else rest.push(t("recipients.form.error.checkInvalid", { field: labelOf(field) }));
      continue;
    }
    if (!el.hidden) continue; // one message per field: the first
    el.textContent = sentence(e.message);
    el.hidden = false;
    const input = form.querySelector('[data-field="' + CSS.escape(field) + '"]');
    if (input) {
      input.setAttribute("aria-invalid", "true");
      if (!first) first = input;
    }
  }
  if (rest.length) formError(rest.join(" "));
  else if (!first && fallback) formError(fallback);
  if (first) first.focus();
}

// labelOf names a body path for a person, for the middle of a sentence: the
// label of its input when the form has one, without what is in brackets
// ("currency"), otherwise its last part in words. English writes it in lower
// case there; other languages keep it as it is (German nouns keep their
// capital).
function labelOf(field) {
  const label = labelText(field).replace(/\s*\(.*\)\s*$/, "");
  if (getLanguage() !== "en") return label;
  return /^[A-Z][a-z]/.test(label) ? label[0].toLowerCase() + label.slice(1) : label;
}

function labelText(field) {
  const all = [CURRENCY, HOLDER_TYPE, ...INDIVIDUAL, ...DOCUMENT, ...BUSINESS, ...ADDRESS];
  for (const spec of Object.values(TYPES)) {
    for (const fl of spec.fields || []) all.push(fl);
    for (const shape of Object.values(spec.shapes || {})) all.push(...shape.fields);
  }
  const known = all.find((fl) => fl.path === field);
  if (known) return text(known.label);
  if (Object.hasOwn(OBJECT_NAMES, field)) return OBJECT_NAMES[field]();
  const last = field.split(".").pop().replace(/([a-z])([A-Z])/g, "$1 $2");
  return humanize(last);
}

function formError(text) {
  $("account-form-error").textContent = text;
  $("account-form-error").hidden = false;
}

function sentence(message) {
  let s = typeof message === "string" && message !== "" ? message : t("recipients.form.error.invalid");
  s = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(s) ? s : s + ".";
}

function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  const s = value.toLowerCase().replaceAll("_", " ");
  return s[0].toUpperCase() + s.slice(1);
}

// buttonName is the text of a button, for a message that tells the person
// to choose it: the same words as on the button, in whatever language.
function buttonName(id) {
  const el = $(id);
  return el ? el.textContent.trim() : "";
}

// The account types a recipient can have, and the form's fields for each:
// the table the add-recipient form (recipientform.js) is laid out from, and
// that names an account's kind wherever a recipient is shown (recipients.js).

import { t } from "./i18n.js";

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
export const choose = (label) => [["", label]];
const enumOptions = (values) => values.map((v) => [v, v]);

// A label or an option's text is a function that reads the catalogue when
// the form is laid out, so that the table can be built before the
// language's messages are loaded; text() reads one either way.
export const text = (v) => (typeof v === "function" ? v() : String(v ?? ""));

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

export const TYPES = {
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

// The "Accounts" part of the signed-in view: the customer's external
// accounts (GET /api/customers/external-accounts) and a form to add one
// (POST /api/customers/external-accounts; the BFF sets customerId from the
// cookie). Bank names for PHP and NGN come from GET /api/discoveries.
//
// Every input carries data-field="<dot path>" with the body's path (e.g.
// accountInfo.beneficiary.address.postalCode), and its error element
// data-error-for="<the same path>", so that the field errors of the wasm
// validator (paywallet.validateAccountInfo, when the module has it) and of
// the service's 400 INVALID_INPUT (details.errors) land next to their input.

import { api, ApiError } from "./api.js";

const $ = (id) => document.getElementById(id);

const BENEFICIARY = [
  {
    path: "accountInfo.beneficiary.beneficiaryType",
    label: "Holder type",
    options: [["INDIVIDUAL", "Individual"]],
  },
  { path: "accountInfo.beneficiary.fullName", label: "Full name", autocomplete: "name" },
];

const ADDRESS = [
  { path: "accountInfo.beneficiary.address.line1", label: "Street address", autocomplete: "address-line1" },
  { path: "accountInfo.beneficiary.address.city", label: "City", autocomplete: "address-level2" },
  { path: "accountInfo.beneficiary.address.postalCode", label: "Postal code", autocomplete: "postal-code" },
  {
    path: "accountInfo.beneficiary.address.country",
    label: "Country (two-letter code)",
    autocomplete: "country",
    autocapitalize: "characters",
    maxLength: 2,
  },
];

// The account types the form offers: currency, label, and the fields
// besides accountType. banks: the discovery query for a bankName <select>.
const TYPES = {
  USD_ACCOUNT: {
    label: "US bank account",
    currency: "USD",
    country: "US",
    fields: [
      { path: "accountInfo.accountNumber", label: "Account number", inputMode: "numeric" },
      { path: "accountInfo.routingNumber", label: "Routing number (9 digits)", inputMode: "numeric" },
      {
        path: "accountInfo.bankAccountType",
        label: "Checking or savings (optional)",
        options: [["", "Not specified"], ["CHECKING", "Checking"], ["SAVINGS", "Savings"]],
      },
      { path: "accountInfo.bankName", label: "Bank name (optional)" },
    ],
    beneficiary: true,
    address: true,
  },
  EUR_ACCOUNT: {
    label: "Euro bank account",
    currency: "EUR",
    country: "DE",
    fields: [
      { path: "accountInfo.iban", label: "IBAN", autocapitalize: "characters" },
      { path: "accountInfo.swiftCode", label: "SWIFT/BIC (optional)", autocapitalize: "characters" },
      { path: "accountInfo.bankName", label: "Bank name (optional)" },
    ],
    beneficiary: true,
    address: true,
  },
  GBP_ACCOUNT: {
    label: "UK bank account",
    currency: "GBP",
    country: "GB",
    fields: [
      { path: "accountInfo.sortCode", label: "Sort code (6 digits)", inputMode: "numeric" },
      { path: "accountInfo.accountNumber", label: "Account number (8 digits)", inputMode: "numeric" },
    ],
    beneficiary: true,
    address: true,
  },
  PHP_ACCOUNT: {
    label: "Philippine bank account",
    currency: "PHP",
    fields: [
      { path: "accountInfo.bankName", label: "Bank", banks: { country: "PH", currency: "PHP" } },
      { path: "accountInfo.accountNumber", label: "Account number (8 to 16 digits)", inputMode: "numeric" },
    ],
    beneficiary: true,
  },
  NGN_ACCOUNT: {
    label: "Nigerian bank account",
    currency: "NGN",
    fields: [
      { path: "accountInfo.bankName", label: "Bank", banks: { country: "NG", currency: "NGN" } },
      { path: "accountInfo.accountNumber", label: "Account number (10 digits)", inputMode: "numeric" },
    ],
    beneficiary: true,
  },
  KES_ACCOUNT: {
    label: "M-PESA mobile money",
    currency: "KES",
    fields: [
      { path: "accountInfo.phoneNumber", label: "Phone number (+254…)", inputMode: "tel", autocomplete: "tel" },
      { path: "accountInfo.provider", label: "Provider", options: [["M-PESA", "M-PESA"]] },
    ],
    beneficiary: true,
  },
  SPARK_WALLET: {
    label: "Spark wallet",
    currency: "BTC",
    fields: [{ path: "accountInfo.address", label: "Spark address (spark1…)", spellcheck: false }],
    beneficiary: false,
  },
};

const STATUS_TEXT = {
  PENDING: "Pending",
  ACTIVE: "Active",
  UNDER_REVIEW: "Under review",
  INACTIVE: "Inactive",
};

// Where an account's primary identifier is, by preference.
const PRIMARY = ["accountNumber", "iban", "clabeNumber", "phoneNumber", "address", "pixKey", "vpa"];

const ctx = {
  wallet: () => Promise.reject(new Error("no wallet")),
  setStatus: () => {},
  shown: false,
  loading: 0, // generation of the list being loaded
  banks: new Map(), // "PH/PHP" -> Promise<[{bankName, displayName}]>
};

/**
 * Wires the section once.
 *
 * @param {{wallet: () => Promise<object>, setStatus: (text: string) => void}} options
 */
export function initAccounts({ wallet, setStatus }) {
  ctx.wallet = wallet;
  ctx.setStatus = setStatus;
  $("account-type").addEventListener("change", renderFields);
  $("add-account").addEventListener("submit", onSubmit);
  $("accounts-refresh").addEventListener("click", () => loadAccounts());
  renderFields();
}

/** Shows the section; the list is (re)loaded when it was hidden. */
export function showAccounts() {
  $("accounts").hidden = false;
  if (!ctx.shown) {
    ctx.shown = true;
    loadAccounts();
  }
}

/** Hides the section and forgets what it showed (another person may sign in). */
export function hideAccounts() {
  ctx.shown = false;
  ctx.loading++;
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
    $("accounts-list").replaceChildren(...all.map(accountItem));
    $("accounts-empty").hidden = all.length > 0;
  } catch (err) {
    if (generation !== ctx.loading) return;
    if (err instanceof ApiError && err.status === 401) return; // the page signs out
    errorEl.textContent = "Could not load your accounts: " + messageOf(err);
    errorEl.hidden = false;
  }
}

function addToList(account) {
  const list = $("accounts-list");
  const li = accountItem(account);
  const old = [...list.children].find((el) => el.dataset.id === account.id);
  if (old) old.replaceWith(li);
  else list.append(li);
  $("accounts-empty").hidden = true;
}

function accountItem(account) {
  const info = (account && account.accountInfo) || {};
  const li = document.createElement("li");
  li.className = "account";
  li.dataset.id = String(account.id || "");
  li.dataset.status = String(account.status || "");

  const main = document.createElement("div");
  main.className = "account-main";
  const type = document.createElement("span");
  type.className = "account-kind";
  type.textContent = (TYPES[info.accountType] && TYPES[info.accountType].label) || humanize(info.accountType) || "Account";
  const currency = document.createElement("span");
  currency.className = "account-currency";
  currency.textContent = String(account.currency || "");
  main.append(type, " ", currency);

  const ident = document.createElement("span");
  ident.className = "account-ident";
  const last4 = lastFour(info);
  ident.textContent = last4 ? "•••• " + last4 : "";
  if (last4) ident.setAttribute("aria-label", "ending in " + last4);

  const badge = document.createElement("span");
  const status = String(account.status || "");
  badge.className = "badge badge-" + status.toLowerCase().replaceAll("_", "-");
  badge.textContent = STATUS_TEXT[status] || humanize(status) || "Unknown";

  li.append(main, ident, badge);
  return li;
}

function lastFour(info) {
  for (const key of PRIMARY) {
    const v = info[key];
    if (typeof v === "string" && v !== "") return v.slice(-4);
  }
  return "";
}

// ---- form -------------------------------------------------------------------

function currentType() {
  const t = $("account-type").value;
  return TYPES[t] ? t : "USD_ACCOUNT";
}

// renderFields lays out the inputs of the chosen type, keeping what was
// typed into fields the new type has too (the beneficiary, say).
function renderFields() {
  const box = $("account-fields");
  const kept = {};
  for (const el of box.querySelectorAll("[data-field]")) kept[el.dataset.field] = el.value;

  const spec = TYPES[currentType()];
  const parts = [fieldset("Account details", spec.fields)];
  if (spec.beneficiary) {
    parts.push(fieldset("Account holder", BENEFICIARY));
    if (spec.address) parts.push(fieldset("Holder's address", ADDRESS, spec.country));
  }
  box.replaceChildren(...parts);

  for (const el of box.querySelectorAll("[data-field]")) {
    const v = kept[el.dataset.field];
    if (v !== undefined && el.tagName === "INPUT") el.value = v;
    if (v !== undefined && el.tagName === "SELECT" && [...el.options].some((o) => o.value === v)) el.value = v;
  }
  clearErrors();
}

function fieldset(legendText, fields, countryHint) {
  const fs = document.createElement("fieldset");
  const legend = document.createElement("legend");
  legend.textContent = legendText;
  fs.append(legend);
  for (const f of fields) fs.append(fieldRow(f, countryHint));
  return fs;
}

function fieldRow(f, countryHint) {
  const id = "acct-" + f.path.replaceAll(".", "-");
  const row = document.createElement("div");
  row.className = "field";
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = f.label;

  let input;
  if (f.options || f.banks) {
    input = document.createElement("select");
    for (const [value, text] of f.options || [["", "Loading banks…"]]) input.append(new Option(text, value));
    if (f.banks) fillBanks(input, f.banks);
  } else {
    input = document.createElement("input");
    input.type = "text";
    input.autocomplete = f.autocomplete || "off";
    if (f.inputMode) input.inputMode = f.inputMode;
    if (f.maxLength) input.maxLength = f.maxLength;
    if (f.autocapitalize) input.setAttribute("autocapitalize", f.autocapitalize);
    if (f.spellcheck === false) input.spellcheck = false;
    if (f.path.endsWith(".country") && countryHint) input.placeholder = countryHint;
  }
  input.id = id;
  input.name = f.path;
  input.dataset.field = f.path;
  input.setAttribute("aria-describedby", id + "-error");

  const error = document.createElement("p");
  error.className = "field-error";
  error.id = id + "-error";
  error.dataset.errorFor = f.path;
  error.hidden = true;

  row.append(label, input, error);
  return row;
}

// fillBanks puts the discovery's bank names into a <select>: the value is
// the exact bankName the service requires, the text its display name.
async function fillBanks(select, { country, currency }) {
  const key = country + "/" + currency;
  if (!ctx.banks.has(key)) {
    const q = new URLSearchParams({ country, currency });
    const p = api("GET", "/api/discoveries?" + q).then(({ data }) => (data && Array.isArray(data.data) ? data.data : []));
    p.catch(() => ctx.banks.delete(key)); // try again next time
    ctx.banks.set(key, p);
  }
  try {
    const banks = await ctx.banks.get(key);
    const options = [new Option(banks.length ? "Choose a bank" : "No banks available", "")];
    for (const b of banks) {
      if (b && typeof b.bankName === "string") options.push(new Option(b.displayName || b.bankName, b.bankName));
    }
    select.replaceChildren(...options);
  } catch (err) {
    select.replaceChildren(new Option("Could not load banks", ""));
    formError("Could not load the list of banks: " + messageOf(err));
  }
}

// buildBody is the create body from the form: currency, and accountInfo
// with accountType, the non-empty fields and, for fiat types, the
// beneficiary (and its address where the type needs one) even when empty,
// so that every missing field is reported on its own input.
function buildBody() {
  const type = currentType();
  const spec = TYPES[type];
  const body = { currency: spec.currency, accountInfo: { accountType: type } };
  if (spec.beneficiary) {
    body.accountInfo.beneficiary = {};
    if (spec.address) body.accountInfo.beneficiary.address = {};
  }
  for (const el of $("account-fields").querySelectorAll("[data-field]")) {
    const value = el.value.trim();
    if (value !== "") setPath(body, el.dataset.field, value);
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
  clearErrors();
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
        showErrors(err.details.errors, err.message);
      } else if (!(err instanceof ApiError && err.status === 401)) {
        formError(messageOf(err));
      }
      return;
    }
    if (res.data && res.data.id) addToList(res.data);
    resetForm();
    ctx.setStatus("Account added.");
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

// validateLocally runs the wasm module's validator when the module has it
// (and answers within a few seconds); otherwise it reports nothing and the
// service decides.
async function validateLocally(body) {
  let wallet;
  try {
    wallet = await Promise.race([ctx.wallet(), new Promise((_, reject) => setTimeout(reject, 3000))]);
  } catch {
    return [];
  }
  if (!wallet || typeof wallet.validateAccountInfo !== "function") return [];
  try {
    const errors = await wallet.validateAccountInfo(body);
    return Array.isArray(errors) ? errors.filter((e) => e && typeof e.field === "string") : [];
  } catch {
    return []; // a broken validator must not block the form; the service checks too
  }
}

function resetForm() {
  const type = currentType();
  $("add-account").reset();
  $("account-type").value = type;
  for (const el of $("account-fields").querySelectorAll("[data-field]")) {
    el.value = el.tagName === "SELECT" && el.options.length ? el.options[0].value : "";
  }
  clearErrors();
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
      rest.push((field ? field + ": " : "") + sentence(e.message));
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

function formError(text) {
  $("account-form-error").textContent = text;
  $("account-form-error").hidden = false;
}

function sentence(message) {
  let s = typeof message === "string" && message !== "" ? message : "is invalid";
  s = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(s) ? s : s + ".";
}

function humanize(value) {
  if (typeof value !== "string" || value === "") return "";
  const s = value.toLowerCase().replaceAll("_", " ");
  return s[0].toUpperCase() + s.slice(1);
}

function messageOf(err) {
  if (err instanceof ApiError) {
    if (err.status === 0 || err.status >= 500) return "The service is not reachable right now. Try again shortly.";
    return err.message;
  }
  return err && err.message ? err.message : String(err);
}

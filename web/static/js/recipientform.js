// The add-recipient form (the view /recipients/new, views/recipient-new.js):
// a form to add an external account (POST /api/customers/external-accounts;
// the BFF sets customerId from the cookie), laid out from the wallet
// module's description of the account types (accountForm, the table of
// shared/accountrules). Bank names come from GET /api/discoveries.
//
// Every input carries data-field="<dot path>" with the body's path (e.g.
// accountInfo.beneficiary.address.postalCode), and its error element
// data-error-for="<the same path>", so that the field errors of the wasm
// validator (paywallet.validateAccountInfo, when the module has it) and of
// the service's 400 INVALID_INPUT (details.errors) land next to their input.
//
// Exported API, for the view:
//
//   initRecipientForm({wallet, setStatus})  wires the form once, signed out.
//   signInRecipientForm()                   signed in: bank lists may be asked for.
//   signOutRecipientForm()                  signed out: the form is emptied.
//   showRecipientForm()                     the view is shown: the fields are drawn.
//
// An account added goes into the list (recipients.js addToList), then
// "wallet:account-added" {account} is dispatched on document, before focus
// moves to it in the list.
//
// Bank names (GET /api/discoveries) are asked for only when signed in and
// while the form is on screen: the signed-out first page asks for nothing.

import { api, ApiError, messageOf } from "./api.js";
import { getLanguage, humanize, t } from "./i18n.js";
import { countryName, countryOptions } from "./countries.js";
import { accountLabel, addToList, PRIMARY, recipientList, sentence, statusAdvice } from "./recipients.js";

const $ = (id) => document.getElementById(id);

const B = "accountInfo.beneficiary.";

// The parts of the body that have no input of their own, named for a
// person in the form's error line.
const OBJECT_NAMES = {
  "accountInfo.beneficiary": () => t("recipients.form.part.beneficiary"),
  "accountInfo.beneficiary.address": () => t("recipients.form.part.address"),
  "accountInfo.beneficiary.businessInfo": () => t("recipients.form.part.businessInfo"),
};

const ctx = {
  wallet: () => Promise.reject(new Error("no wallet")),
  setStatus: () => {},
  shown: false, // signed in
  formDrawn: false, // the add form's fields are drawn (showRecipientForm)
  banks: new Map(), // "PH/PHP" -> Promise<[{bankName, displayName}]>
  shapes: {}, // accountType -> the chosen shape (COP and SLV: BANK or MOBILE)
  rendering: 0, // generation of the laid-out fields
  touched: new Set(), // data-field paths checked as the person types
  live: 0, // generation of the check as the person types
  liveTimer: 0,
  language: "", // the language the form was laid out in
  table: null, // Promise of the form's description (formTable)
  get list() {
    return recipientList(); // the accounts listed, for a duplicate's name
  },
};

/**
 * Wires the form once.
 *
 * @param {{wallet: () => Promise<object>, setStatus: (text: string) => void}} options
 */
export function initRecipientForm({ wallet, setStatus }) {
  ctx.wallet = wallet;
  ctx.setStatus = setStatus;
  $("account-type").addEventListener("change", renderFields);
  $("account-fields").addEventListener("change", onFieldsChange);
  $("account-fields").addEventListener("input", onFieldInput);
  $("account-fields").addEventListener("focusout", onFieldLeave);
  $("add-account").addEventListener("submit", onSubmit);
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
  if (!table) {
    whenFormReady();
    return;
  }
  if (!ctx.formDrawn || ctx.language !== getLanguage()) renderFields();
  loadBanksWhenNeeded();
}

/** Signed in: the form's bank lists may be asked for; written again in the messages' language. */
export function signInRecipientForm() {
  ctx.shown = true;
  // The messages' language may have been chosen after initRecipientForm: the
  // form is written again in it, keeping what was typed.
  if (table && ctx.language !== getLanguage()) {
    const type = currentType();
    $("account-type").replaceChildren(...typeOptions());
    $("account-type").value = type;
    if (ctx.formDrawn) renderFields();
  }
  loadBanksWhenNeeded();
}

/** Signed out: the form is emptied. */
export function signOutRecipientForm() {
  ctx.shown = false;
  resetForm();
}

// ---- the form's description ----------------------------------------------------
//
// The account types, their fields and the holder's come from the wallet
// module's accountForm() (shared/accountrules Form: one table entry per
// type), converted once for drawing: a label and an option's text become
// functions that read the message catalogue when the form is laid out. A
// field is
//   {path, label, required, options?: [[value, text]], banks?: {country, currency},
//    regions?: [code], countries?, inputMode?, autocomplete?, autocapitalize?,
//    placeholder?, maxLength?, spellcheck?, type?}
// banks: the bankName must be a discovery value, so it is a <select> filled
// from /api/discoveries (country "" : banks of every country of the
// currency). The form waits for the module ("Getting the form ready…"): the
// person opened it, and the module checks what they type anyway.

// table is the converted description, once the module gave it:
// {order: [type], types: {type: spec}, currency, holderType, individual,
// document, business, address, countries: [code]}; a spec is {label, currency, defaultCurrency,
// country, wallet, documents, fields | shapes: {key: {label, fields}}}.
let table = null;

// A label or an option's text is a function that reads the catalogue when
// the form is laid out, or a fixed string; text() reads one either way.
const text = (v) => (typeof v === "function" ? v() : String(v ?? ""));

const HINTS = ["inputMode", "autocomplete", "autocapitalize", "placeholder", "type", "maxLength", "spellcheck", "countries", "regions", "banks"];

function fieldOf(d) {
  const f = { path: d.path, label: () => t(d.label, d.labelParams || {}), required: d.required === true };
  for (const k of HINTS) if (d[k] !== undefined) f[k] = d[k];
  if (Array.isArray(d.options)) {
    f.options = d.options.map((o) => [o.value, o.label ? () => t(o.label) : (o.text ?? o.value)]);
  }
  return f;
}

const fieldsOf = (list) => (Array.isArray(list) ? list.map(fieldOf) : []);

function tableOf(form) {
  const types = {};
  for (const d of form.types) {
    const spec = { label: () => t(d.label), currency: d.currency || null, defaultCurrency: d.defaultCurrency || "",
      country: d.country || "", wallet: d.wallet === true, documents: d.documents === true };
    if (Array.isArray(d.shapes)) {
      spec.shapes = {};
      for (const s of d.shapes) spec.shapes[s.key] = { label: () => t(s.label), fields: fieldsOf(s.fields) };
    } else {
      spec.fields = fieldsOf(d.fields);
    }
    types[d.accountType] = spec;
  }
  return {
    order: form.types.map((d) => d.accountType),
    types,
    currency: fieldOf(form.currency),
    holderType: fieldOf(form.holderType),
    individual: fieldsOf(form.individual),
    document: fieldsOf(form.document),
    business: fieldsOf(form.business),
    address: fieldsOf(form.address),
    countries: Array.isArray(form.countries) ? form.countries : [],
  };
}

// formTable resolves to the converted description, asking the module once
// (again after a failure, on the next showing).
function formTable() {
  if (!ctx.table) {
    ctx.table = ctx
      .wallet()
      .then((wallet) => wallet.accountForm())
      .then((form) => (table = tableOf(form)));
    ctx.table.catch(() => (ctx.table = null));
  }
  return ctx.table;
}

// whenFormReady says "Getting the form ready…" in the form while the
// module is on its way, then lists the types and draws the fields (if the
// form is still on screen); a failure is said in the form's error line.
async function whenFormReady() {
  const form = $("add-account");
  if (form.dataset.preparing === "true") return;
  form.dataset.preparing = "true";
  form.setAttribute("aria-busy", "true");
  $("account-submit").disabled = true;
  $("account-type").disabled = true;
  $("account-fields").replaceChildren(paragraph("hint", t("recipients.form.gettingReady")));
  $("account-form-error").hidden = true;
  try {
    await formTable();
  } catch (err) {
    $("account-fields").replaceChildren();
    formError(t("recipients.form.error.notReady", { reason: sentence(messageOf(err)) }));
    return;
  } finally {
    delete form.dataset.preparing;
    form.removeAttribute("aria-busy");
    $("account-submit").disabled = false;
    $("account-type").disabled = false;
  }
  $("account-type").replaceChildren(...typeOptions());
  $("account-type").value = table.order[0];
  $("account-fields").replaceChildren();
  if (formOnScreen()) showRecipientForm();
}

function paragraph(className, content) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = content;
  return p;
}

// ---- form -------------------------------------------------------------------

function currentType() {
  const type = $("account-type").value;
  return table && Object.hasOwn(table.types, type) ? type : table ? table.order[0] : "";
}

function currentShape(type) {
  const shapes = table.types[type].shapes;
  if (!shapes) return "";
  const s = ctx.shapes[type];
  return shapes[s] ? s : Object.keys(shapes)[0];
}

function accountFields(type) {
  const spec = table.types[type];
  return spec.shapes ? spec.shapes[currentShape(type)].fields : spec.fields;
}

function typeOptions() {
  return Object.entries(table.types).map(
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
  } else if (el.dataset && el.dataset.field === table.holderType.path) {
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
  const spec = table.types[type];
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
    details.append(fieldRow(table.currency, true));
  }
  for (const fl of accountFields(type)) details.append(fieldRow(fl, fl.required));
  const parts = [details];

  if (!spec.wallet) {
    const business = kept[table.holderType.path] === "BUSINESS";
    const holder = fieldset(t("recipients.form.section.holder"));
    holder.append(fieldRow(table.holderType, true));
    const members = business ? table.business : spec.documents ? table.individual.concat(table.document) : table.individual;
    for (const fl of members) holder.append(fieldRow(fl, !!fl.required));
    const address = fieldset(t("recipients.form.section.address"));
    address.id = "acct-address";
    for (const fl of table.address) address.append(fieldRow(fl, false));
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
  for (const [key, shape] of Object.entries(table.types[type].shapes)) select.append(new Option(text(shape.label), key));
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
  const spec = table.types[type];
  if (spec.wallet) return;
  const wallet = await walletWithin(15000);
  if (!wallet || typeof wallet.requiredBeneficiaryFields !== "function" || generation !== ctx.rendering) return;
  const holderType = fieldValue(table.holderType.path) || "INDIVIDUAL";
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
    markRequired(el, el.dataset.field === table.holderType.path || required.has(el.dataset.field));
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
    for (const [code, name] of countryOptions(table.countries)) input.append(new Option(name, code));
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
  const spec = table.types[type];
  const body = { accountInfo: { accountType: type } };
  if (spec.currency) body.currency = spec.currency;
  if (!spec.wallet) {
    const beneficiary = (body.accountInfo.beneficiary = {});
    if (fieldValue(table.holderType.path) === "BUSINESS") beneficiary.businessInfo = {};
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
  if (!table) return; // the submit waits for the form (whenFormReady)
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
  if (!table) return; // still being prepared, or never shown: nothing typed
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
  const all = [];
  if (table) {
    all.push(table.currency, table.holderType, ...table.individual, ...table.document, ...table.business, ...table.address);
    for (const spec of Object.values(table.types)) {
      for (const fl of spec.fields || []) all.push(fl);
      for (const shape of Object.values(spec.shapes || {})) all.push(...shape.fields);
    }
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

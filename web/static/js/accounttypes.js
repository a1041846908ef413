// What the page knows of account types without the wasm module, so that a
// recipient is named and shown before the module is ready (the add form,
// recipientform.js, takes its types and fields from the module's
// accountForm(), built from shared/accountrules' table):
//
//   - a type's name for a person is the message recipients.type.<the type
//     in lowerCamel words> (USD_ACCOUNT: recipients.type.usdAccount), the
//     convention of shared/accountrules TypeLabelKey;
//   - its facts (the country it pays into, whether it is a wallet) come
//     with GET /api/config, which carries accountrules.Types(); the page
//     tells them here at start (setAccountTypes).
//
// No list of account types is written here.

const facts = new Map(); // accountType -> {accountType, currency, country?, wallet?}

/**
 * Takes the account types' facts of GET /api/config (accountTypes).
 *
 * @param {Array<{accountType: string, currency: string, country?: string, wallet?: boolean}>} list
 */
export function setAccountTypes(list) {
  facts.clear();
  for (const f of Array.isArray(list) ? list : []) {
    if (f && typeof f.accountType === "string") facts.set(f.accountType, f);
  }
}

/** The facts of an account type, or null when the page was not told of it. */
export function typeFacts(type) {
  return facts.get(type) || null;
}

/** The message key of a type's name: "recipients.type.usdAccount" for USD_ACCOUNT. */
export function typeLabelKey(type) {
  return "recipients.type." + String(type).toLowerCase().replace(/_+(.?)/g, (_, c) => c.toUpperCase());
}

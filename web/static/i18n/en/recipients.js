// English messages of the recipients part: Recipients, the add form, sign-in methods, recovery phrase (views/recipients.js, views/recipient.js, recipientform.js, views/security/credentials.js).
// Merged into ../en.js; conventions at the top of ../../js/i18n.js.
//
// {reason} is the service's or the browser's own sentence, in English, put
// after the page's. {refresh}, {reveal}, {hide} and {export} are the texts
// of those buttons, as the page shows them.

export default {
  // The list of recipients (views/recipients.js).
  "recipients.list.error.load": "Your recipients could not be loaded. {reason} Choose {refresh} to try again.",

  // An account named for a person: "Ada Lovelace, US bank account •••• 5678".
  "recipients.account.kindAndNumber": "{kind} •••• {last4}",
  "recipients.account.holderAndKind": "{holder}, {account}",
  "recipients.account.kindUnknown": "Account",

  // Kinds of account (the list's "type" and the form's account type).
  "recipients.type.usdAccount": "US bank account",
  "recipients.type.mxnAccount": "Mexican bank account, CLABE",
  "recipients.type.brlAccount": "Brazilian Pix account",
  "recipients.type.copAccount": "Colombian account",
  "recipients.type.slvAccount": "El Salvador account",
  "recipients.type.eurAccount": "Euro bank account, IBAN",
  "recipients.type.phpAccount": "Philippine bank account",
  "recipients.type.gbpAccount": "UK bank account",
  "recipients.type.inrAccount": "Indian UPI account",
  "recipients.type.ngnAccount": "Nigerian bank account",
  "recipients.type.zarAccount": "South African bank account",
  "recipients.type.kesAccount": "Kenyan mobile money",
  "recipients.type.tzsAccount": "Tanzanian mobile money",
  "recipients.type.zmwAccount": "Zambian mobile money",
  "recipients.type.rwfAccount": "Rwandan mobile money",
  "recipients.type.mwkAccount": "Malawian mobile money",
  "recipients.type.ugxAccount": "Ugandan mobile money",
  "recipients.type.xofAccount": "West African mobile money",
  "recipients.type.cadAccount": "Canadian bank account",
  "recipients.type.aedAccount": "UAE bank account, IBAN",
  "recipients.type.sparkWallet": "Spark wallet",

  // An account's status (badge) and what the person can do with it.
  "recipients.status.pending": "Pending",
  "recipients.status.active": "Active",
  "recipients.status.underReview": "Under review",
  "recipients.status.removed": "Removed",
  "recipients.status.unknown": "Unknown",
  "recipients.advice.pending": "It is being checked; you can send money to it once it shows Active.",
  "recipients.advice.active": "You can send money to it now.",
  "recipients.advice.underReview": "It is under review; you can send money to it once it is approved.",
  "recipients.advice.removed": "It was removed: you can no longer send money to it. Past payments to it are kept.",

  // One recipient's view.
  "recipients.detail.loading": "Loading this recipient…",
  "recipients.detail.error.load": "This recipient could not be loaded. {reason}",
  // {link} is where the link "recipients.detail.notFoundLink" goes.
  "recipients.detail.notFound": "There is no such recipient among yours. The link may be old or mistyped; {link}.",
  "recipients.detail.notFoundLink": "see all your recipients",
  "recipients.detail.holder": "Holder",
  "recipients.detail.holderNotGiven": "Not given",
  "recipients.detail.type": "Type",
  "recipients.detail.bank": "Bank",
  "recipients.detail.number": "Number",
  "recipients.detail.endingIn": "Ending in {last4}",
  "recipients.detail.currency": "Currency",
  "recipients.detail.country": "Country",
  "recipients.detail.status": "Status",
  "recipients.detail.added": "Added",

  // Removing a recipient; {recipient} is named as in recipients.account.*.
  "recipients.remove.button": "Remove recipient",
  "recipients.remove.question": "Remove {recipient}? You will no longer be able to send money to it. Payments already made are not affected.",
  "recipients.remove.confirm": "Yes, remove",
  "recipients.remove.cancel": "Keep it",
  "recipients.remove.error.gone": "This recipient is no longer among yours, so there is nothing to remove. Go back to your recipients to see the current list.",
  "recipients.remove.error.failed": "The recipient was not removed. {reason}",
  "recipients.remove.done": "Removed {recipient}. You can no longer send money to it; past payments to it are kept.",
  "recipients.remove.status": "Recipient removed.",

  // The form that adds a recipient.
  "recipients.form.typeOption": "{type} ({currency})",
  "recipients.form.section.account": "Account details",
  "recipients.form.section.holder": "Account holder",
  "recipients.form.section.address": "Holder's address",
  "recipients.form.currencyFixed": "Currency: {currency}",
  "recipients.form.optional": "(optional)",
  "recipients.form.shape.bank": "Bank transfer",
  "recipients.form.shape.mobile": "Mobile money",
  "recipients.form.kind.checking": "Checking",
  "recipients.form.kind.savings": "Savings",
  "recipients.form.holderType.individual": "Individual",
  "recipients.form.holderType.business": "Business",
  "recipients.form.pixKeyType.email": "E-mail",
  "recipients.form.pixKeyType.phone": "Phone",
  "recipients.form.pixKeyType.random": "Random key",
  "recipients.form.document.passport": "Passport (PP)",

  // The first entry of a list, before anything is chosen.
  "recipients.form.choose.provider": "Choose a provider",
  "recipients.form.choose.notSpecified": "Not specified",
  "recipients.form.choose.keyType": "Choose a key type",
  "recipients.form.choose.one": "Choose one",
  "recipients.form.choose.fromPhone": "From the phone number",
  "recipients.form.choose.noDocument": "None",
  "recipients.form.choose.country": "Choose a country",
  "recipients.form.banks.loading": "Loading banks…",
  "recipients.form.banks.none": "No banks available",
  "recipients.form.gettingReady": "Getting the form ready…",
  "recipients.form.banks.failed": "Could not load banks",

  // Field labels. What is in brackets is left out when an error names the
  // field (recipients.form.error.check).
  "recipients.form.field.shape": "Paid by",
  "recipients.form.field.accountNumber": "Account number",
  "recipients.form.field.accountNumberDigits": {
    one: "Account number ({count} digit)",
    other: "Account number ({count} digits)",
  },
  "recipients.form.field.accountNumberDigitsBetween": "Account number ({min} to {max} digits)",
  "recipients.form.field.routingNumber": "Routing number (9 digits)",
  "recipients.form.field.bankAccountType": "Checking or savings",
  "recipients.form.field.bank": "Bank",
  "recipients.form.field.provider": "Provider",
  "recipients.form.field.phone": "Phone number ({prefix}…)",
  "recipients.form.field.phoneXof": "Phone number ({first}, {second} or {last}…)",
  "recipients.form.field.iban": "IBAN",
  "recipients.form.field.swift": "SWIFT/BIC",
  "recipients.form.field.clabe": "CLABE (18 digits)",
  "recipients.form.field.pixKey": "Pix key",
  "recipients.form.field.pixKeyType": "Pix key type",
  "recipients.form.field.cpfOrCnpj": "CPF or CNPJ (11 to 14 digits)",
  "recipients.form.field.sortCode": "Sort code (6 digits)",
  "recipients.form.field.upiId": "UPI ID (name@bank)",
  "recipients.form.field.institutionNumber": "Institution number (3 digits)",
  "recipients.form.field.transitNumber": "Transit number (5 digits)",
  "recipients.form.field.sparkAddress": "Spark address (spark1…)",
  "recipients.form.field.currency": "Currency (three letters)",
  "recipients.form.field.holderType": "Holder",
  "recipients.form.field.fullName": "Full name",
  "recipients.form.field.birthDate": "Date of birth",
  "recipients.form.field.nationality": "Nationality",
  "recipients.form.field.documentType": "Identity document",
  "recipients.form.field.documentNumber": "Document number",
  "recipients.form.field.legalName": "Legal name",
  "recipients.form.field.registrationNumber": "Registration number",
  "recipients.form.field.taxId": "Tax ID",
  "recipients.form.field.street": "Street address",
  "recipients.form.field.city": "City",
  "recipients.form.field.postalCode": "Postal code",
  "recipients.form.field.country": "Country",
  // Parts of an account without a field of their own, named in errors.
  "recipients.form.part.beneficiary": "Beneficiary",
  "recipients.form.part.address": "Address",
  "recipients.form.part.businessInfo": "Business info",

  // Adding: what happened. {advice} is one of recipients.advice.*.
  "recipients.form.added": "Account added.",
  "recipients.form.addedNamed": "Added {recipient}. {advice}",
  "recipients.form.addedNamedOnly": "Added {recipient}.",
  // {field} is a label, in lower case in English ("routing number");
  // {problem} is the service's words for what is wrong, in English.
  "recipients.form.error.check": "Check the {field}: {problem}.",
  "recipients.form.error.checkInvalid": "Check the {field}: it is invalid.",
  "recipients.form.error.invalid": "This is not valid.",
  "recipients.form.error.fields": "The account was not added: check the fields marked below.",
  "recipients.form.error.failed": "The account was not added. {reason}",
  "recipients.form.error.notReady": "The form could not be loaded. Reload the page to try again. ({reason})",
  "recipients.form.error.banks": "The list of banks could not be loaded. {reason}",
  "recipients.form.error.duplicateRemoved": "You removed this account earlier, and a removed account cannot be added again. Check the account details, or add a different account.",
  "recipients.form.error.duplicateOf": "You already have this account: {recipient}. Send to it from your recipients, or check the details if you meant a different account.",
  "recipients.form.error.duplicate": "You already have an account with these details, so it was not added again. Look for it in your recipients, or check the details if you meant a different account.",

  // Sign-in methods (views/security/credentials.js).
  "security.methods.type.emailCode": "E-mail code",
  "security.methods.type.passkey": "Passkey",
  "security.methods.type.oauth": "Single sign-on",
  // A method named in a sentence: its kind, then its nickname.
  "security.methods.named": "{type} {name}",
  "security.methods.link": "Link {provider}",
  "security.methods.remove": "Remove",
  "security.methods.onlyOne": "Your only way to sign in cannot be removed",
  "security.methods.removeQuestion": "Remove {method}? It will no longer sign in to your wallet, and its sessions end.",
  "security.methods.removeQuestionUnnamed": "Remove this sign-in method? It will no longer sign in to your wallet, and its sessions end.",
  "security.methods.removed": "Sign-in method removed.",
  "security.methods.error.load": "Your sign-in methods could not be loaded. {reason}",
  "security.methods.error.removeSelf": "You are signed in with {method}, and a sign-in method cannot remove itself. Sign out, sign in another way, then remove it.",
  "security.methods.error.removeSelfUnnamed": "You are signed in with this sign-in method, and a sign-in method cannot remove itself. Sign out, sign in another way, then remove it.",
  "security.methods.error.removeLast": "This is your only way to sign in, so it cannot be removed. Add a passkey or link another sign-in first, then remove it.",
  "security.methods.error.removeGone": "This sign-in method was already removed. The list below is up to date.",
  "security.methods.error.remove": "The sign-in method was not removed. {reason}",

  // Adding a passkey.
  "security.passkey.error.name": "Name the passkey with letters, numbers, spaces and . _ - ' ( ), up to {max} characters.",
  "security.passkey.status.prompt": "Follow your browser's prompt to create the passkey…",
  "security.passkey.status.added": "Passkey added. You can now sign in with it.",
  "security.passkey.error.exists": "This passkey is already one of your sign-in methods. Create one on another device or security key instead.",
  "security.passkey.error.failed": "The passkey was not added. {reason}",

  // Linking single sign-on; {provider} is its name ("Google").
  "security.oauth.status.linked": "{provider} linked. You can now sign in with it.",
  "security.oauth.error.linked": "That {provider} account is already linked to your wallet.",
  "security.oauth.error.failed": "{provider} was not linked. {reason}",

  // The recovery phrase.
  "security.export.notice.hidden": "Your recovery phrase is in this tab, still hidden. Choose {reveal} only where nobody can see your screen.",
  "security.export.notice.shown": "Your recovery phrase is shown below. Write the words down in order and keep them somewhere safe, then choose {hide}.",
  "security.export.status.ready": "Your recovery phrase is ready in this tab. Reveal it only where nobody can see your screen.",
  "security.export.status.wiped": "The recovery phrase is hidden and wiped from this tab.",
  "security.export.error.failed": "The recovery phrase was not exported. {reason}",
  "security.export.error.gone": "The phrase is no longer in this tab. Choose {export} to get it again.",

  // An answer of the wallet service the page does not know; {status} is the HTTP status.
  "security.error.unexpected": "The wallet service gave an unexpected answer ({status}). Reload the page and try again.",
};

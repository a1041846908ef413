// Package accountrules holds the validation rules of external accounts: the
// spec's accountInfo variants, the beneficiary minimums and the create body
// around them. It is the one implementation of those rules: the service runs
// it on every POST /customers/external-accounts, the BFF may run it before
// forwarding, and the browser's wasm module runs it to show field errors
// before anything is sent. To stay small in the wasm module it imports neither
// encoding/json nor net/http, nor fmt, reflect or regexp (TestImports checks).
//
// # Use
//
// Decode the body into a generic tree (map[string]any whose values are string,
// float64, bool, nil, []any or map[string]any, as encoding/json makes it or as
// the wasm module converts a JavaScript object) and call [ValidateCreate]. It
// returns every problem at once as [wire.FieldError] values, sorted by field
// then message, or nil: the service answers 400 INVALID_INPUT with them in
// details.errors. [ValidateAccountInfo] checks an accountInfo alone.
//
// Fields are dot paths from the body, such as
// accountInfo.beneficiary.address.postalCode. A field has at most one problem
// (the first rule it breaks). Messages: "required"; "must be a string", "must
// be an object", "must be a boolean" for a wrong JSON type (null included);
// "unknown field" for a member the shape does not have; otherwise a sentence
// naming the rule, with a [wire.FieldConstraint] carrying the Pattern (a
// JavaScript regular expression), the Enum, the MinLength/MaxLength or a
// Format ("iban", "bech32", "date", "email", "iso-3166-1-alpha-2").
// Values are never trimmed: " 123456789" is not 9 digits.
//
// [AccountTypes] lists the 21 account types and [RequiredCurrency] the currency
// each requires. [PrimaryIdentifier] gives the value whose last three digits
// choose sandbox outcomes, [Rails] the payment rails an account is paid on.
// [RequiredBeneficiaryFields] gives the beneficiary minimum that applies, for
// forms; [SenderRequirements] gives what a business sender must provide for a
// destination currency, for quotes.
//
// # One table
//
// An account type is one entry of the variants table (variants.go): its
// currency, rails, the country it pays into, and its fields in the form's
// order, each with its rule, whether it is required, its label (a message
// key of the page's catalogue, which keeps the words), its list of values
// and the input hints (inputMode, autocomplete…). The validator reads the
// entry, and so does the page: [Form] describes the add-recipient form, which
// the wasm module hands to the page as it is, and [TypeLabelKey] names a type
// by convention so the page can name a recipient's type without the module.
// [Currencies] gives the decimals and symbol of the types' currencies, which
// the BFF's GET /api/config carries to the page and service/rates agrees
// with. A new account type is one entry, its messages and its tests.
//
// # Account types
//
// Every rule of the spec's accountInfo table is enforced, with the lengths and
// patterns of the reference API where the spec gives none. Required (R) and
// optional (o) members besides accountType and beneficiary:
//
//	USD_ACCOUNT   USD  accountNumber R (1-34 chars), routingNumber R (9 digits),
//	                   bankAccountType o (CHECKING|SAVINGS), bankName o (US/USD)
//	MXN_ACCOUNT   MXN  clabeNumber R (18 digits), bankName o (MX/MXN)
//	BRL_ACCOUNT   BRL  pixKey R (1-77), pixKeyType R (CPF|CNPJ|EMAIL|PHONE|RANDOM),
//	                   taxId R (11-14 digits), bankName o (BR/BRL)
//	COP_ACCOUNT   COP  bank transfer: bankName R (CO/COP), accountNumber R (1-34), bankAccountType R;
//	                   mobile money: bankName R (the provider, CO/COP), phoneNumber R (+ and 6-14 digits)
//	SLV_ACCOUNT   USD  bank transfer: bankName R (SV/USD), accountNumber R, bankAccountType R;
//	                   mobile money: phoneNumber R (+ and 6-14 digits), bankName o (SV/USD)
//	EUR_ACCOUNT   EUR  iban R (pattern and ISO 13616 mod 97), swiftCode o, bankName o (any/EUR)
//	PHP_ACCOUNT   PHP  bankName R (PH/PHP), accountNumber R (8-16 digits)
//	GBP_ACCOUNT   GBP  sortCode R (6 digits), accountNumber R (8 digits)
//	INR_ACCOUNT   INR  vpa R (name@bank, 3-255)
//	NGN_ACCOUNT   NGN  accountNumber R (10 digits), bankName R (NG/NGN)
//	ZAR_ACCOUNT   ZAR  accountNumber R (9-13 digits), bankName R (ZA/ZAR)
//	KES_ACCOUNT   KES  phoneNumber R (+254 and 9 digits), provider R (M-PESA)
//	TZS_ACCOUNT   TZS  phoneNumber R (+255 and 9 digits), provider R (AIRTEL|VODACOM)
//	ZMW_ACCOUNT   ZMW  phoneNumber R (+260 and 9 digits), provider R (TNM|AIRTEL|ZAMTEL|MTN)
//	RWF_ACCOUNT   RWF  phoneNumber R (+250 and 9 digits), provider R (MTN|AIRTEL)
//	MWK_ACCOUNT   MWK  phoneNumber R (+265 and 9 digits), provider R (AIRTEL|TNM)
//	UGX_ACCOUNT   UGX  phoneNumber R (+256 and 9 digits), provider R (MTN|AIRTEL)
//	XOF_ACCOUNT   XOF  phoneNumber R (+221 and 9, +225 and 10, +229 and 8 or 9 digits),
//	                   provider R (MTN|ORANGE|WAVE|MOOV|FREE), region o (BJ|CI|SN|TG)
//	CAD_ACCOUNT   CAD  bankCode R (3 digits), branchCode R (5 digits), accountNumber R (7-12 digits)
//	AED_ACCOUNT   any  iban R (AE and 21 digits, and mod 97), swiftCode o
//	SPARK_WALLET  BTC  address R; no beneficiary
//
// A bankName, wherever it is taken, must be exactly the bankName of an entry of
// [paywallet/shared/banks] (what GET /discoveries serves) for the country and
// currency shown; "any/EUR" is any country of the euro entries.
//
// swiftCode is ^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$. A Spark address
// is 87 characters, starts with spark1 in either case, is all one case, uses
// the bech32 alphabet and has a valid checksum under the BIP-173 polymod with
// HRP "spark"; both the bech32 constant and the bech32m one (BIP-350, which
// the Spark SDKs write) are accepted.
//
// # Beneficiaries
//
// Every fiat type requires accountInfo.beneficiary; SPARK_WALLET refuses it.
// beneficiaryType is INDIVIDUAL or BUSINESS. Individuals take fullName (1-255),
// birthDate (YYYY-MM-DD, a real date from 1900-01-01 to today), nationality
// and countryOfResidence (assigned ISO 3166-1 alpha-2 codes), documentType
// (CC|CE|TI|NIT|PP) with documentNumber (1-50), address, email and phoneNumber
// (E.164). Businesses take businessInfo {legalName, taxId, registrationNumber}
// (1-255 each), address, email, phoneNumber and countryOfResidence. A member of
// the other type is refused as "not allowed for beneficiaryType …". An address
// is {line1, line2, city, state (1-255 each), postalCode (1-32), country}.
//
// Minimums: individuals need beneficiaryType and fullName; USD_ACCOUNT,
// GBP_ACCOUNT and EUR_ACCOUNT individuals also need an address with line1,
// city, postalCode and country (the spec's US, UK and Europe rows). Businesses
// need businessInfo.legalName and, by the account's currency, as the spec's
// table: USD, MXN: address; EUR: address and registrationNumber; GBP, INR, BRL,
// DKK, PHP, HKD, IDR, MYR, SGD, THB, VND, AED: address; NGN, ZAR, KES, TZS, RWF,
// ZMW, UGX, BWP, MWK, XOF, XAF: address, registrationNumber and taxId; any
// other currency: legalName only. A given address always needs line1,
// postalCode and country (the reference API's Address schema).
//
// The spec's sentence on business senders to GBP … AED concerns the
// originator of a payment, so it is not an account rule: see
// [SenderRequirements].
//
// # Choices where the spec is open
//
//   - Required or optional: the spec lists members, the reference API says which
//     are required. USD bankName and bankAccountType, MXN, BRL and EUR bankName,
//     EUR and AED swiftCode, and SLV mobile-money bankName are optional; the
//     rest of the table is required.
//   - Bank names: the spec asks for discovery values for PHP, NGN and ZAR; we
//     ask the same of every variant with a bankName, since discovery lists
//     banks (and, for COP and SLV mobile money, providers) for each of them.
//     A bank missing from the list must be added to [paywallet/shared/banks];
//     an optional bankName can be left out.
//   - COP and SLV: accountNumber means a bank transfer, phoneNumber mobile money;
//     both or neither is refused on both fields, and bankAccountType is refused
//     with mobile money.
//   - XOF: the spec gives no provider count; the providers are the operators
//     the reference API names (MTN, Orange, Wave, Moov, Free). region must be
//     the country of the phone prefix; the spec gives no Togo number form, so
//     region TG is always refused.
//   - Beneficiaries follow the spec, not the reference API: EUR individuals do
//     not need countryOfResidence and AED individuals do not need an address.
//     The individual table is keyed by country, so SLV_ACCOUNT (USD in El
//     Salvador) individuals need no address; the business table is keyed by
//     currency, so SLV businesses follow the USD row.
//   - Checks beyond the spec: IBAN check digits (also for AED), Spark bech32
//     checksum, assigned country codes, birth dates not before 1900 nor after
//     today in UTC+14 (the earliest time zone), documentType and documentNumber
//     given together, no control characters in free text. Not checked: ABA
//     routing, CLABE and CPF/CNPJ check digits, and pixKey against pixKeyType
//     (sandbox data commonly breaks them).
//   - null is a wrong type ("must be a string"), except customerId, where null
//     means a platform account as the spec says.
//   - An unknown or missing accountType stops the check of accountInfo there:
//     which members exist depends on it.
package accountrules

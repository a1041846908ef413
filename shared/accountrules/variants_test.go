package accountrules

import (
	"slices"
	"strings"
	"testing"
)

// TestBaseBodiesAccepted: every base body of the tables is valid, also when
// checked as accountInfo alone.
func TestBaseBodiesAccepted(t *testing.T) {
	for _, k := range baseKinds {
		body := base(k)
		if errs := ValidateCreate(body); errs != nil {
			t.Errorf("%s refused:%s", k, dump(errs))
		}
		info := body["accountInfo"].(map[string]any)
		if errs := ValidateAccountInfo(body["currency"].(string), info, "accountInfo"); errs != nil {
			t.Errorf("%s accountInfo refused:%s", k, dump(errs))
		}
	}
}

// TestAccountTypes: the 21 types of the spec's table and their currencies.
func TestAccountTypes(t *testing.T) {
	want := []struct{ accountType, currency string }{
		{"USD_ACCOUNT", "USD"}, {"MXN_ACCOUNT", "MXN"}, {"BRL_ACCOUNT", "BRL"}, {"COP_ACCOUNT", "COP"},
		{"SLV_ACCOUNT", "USD"}, {"EUR_ACCOUNT", "EUR"}, {"PHP_ACCOUNT", "PHP"}, {"GBP_ACCOUNT", "GBP"},
		{"INR_ACCOUNT", "INR"}, {"NGN_ACCOUNT", "NGN"}, {"ZAR_ACCOUNT", "ZAR"}, {"KES_ACCOUNT", "KES"},
		{"TZS_ACCOUNT", "TZS"}, {"ZMW_ACCOUNT", "ZMW"}, {"RWF_ACCOUNT", "RWF"}, {"MWK_ACCOUNT", "MWK"},
		{"UGX_ACCOUNT", "UGX"}, {"XOF_ACCOUNT", "XOF"}, {"CAD_ACCOUNT", "CAD"}, {"AED_ACCOUNT", ""},
		{"SPARK_WALLET", "BTC"},
	}
	types := AccountTypes()
	if len(types) != 21 || len(want) != 21 {
		t.Fatalf("AccountTypes() has %d values, want 21", len(types))
	}
	for i, w := range want {
		if types[i] != w.accountType {
			t.Errorf("AccountTypes()[%d] = %s, want %s", i, types[i], w.accountType)
		}
		if got := RequiredCurrency(w.accountType); got != w.currency {
			t.Errorf("RequiredCurrency(%s) = %q, want %q", w.accountType, got, w.currency)
		}
	}
	if RequiredCurrency("EUR") != "" || RequiredCurrency("") != "" {
		t.Error("RequiredCurrency of an unknown type should be empty")
	}
	types[0] = "changed"
	if AccountTypes()[0] != "USD_ACCOUNT" {
		t.Error("AccountTypes returned shared storage")
	}
}

func TestCurrencyAndType(t *testing.T) {
	runRows(t, []row{
		{name: "currency is required", kind: "USD_ACCOUNT", set: map[string]any{"currency": absent}, want: []string{"currency"}, how: "required"},
		{name: "currency is a string", kind: "USD_ACCOUNT", set: map[string]any{"currency": 840.0}, want: []string{"currency"}, how: "type"},
		{name: "currency is three upper-case letters", kind: "USD_ACCOUNT", set: map[string]any{"currency": "usd"}, want: []string{"currency"}, how: "pattern"},
		{name: "currency must be the type's: USD_ACCOUNT in EUR", kind: "USD_ACCOUNT", set: map[string]any{"currency": "EUR"}, want: []string{"currency"}, how: "enum"},
		{name: "SLV_ACCOUNT requires USD", kind: "SLV_ACCOUNT", set: map[string]any{"currency": "SVC"}, want: []string{"currency"}, how: "enum"},
		{name: "SPARK_WALLET requires BTC", kind: "SPARK_WALLET", set: map[string]any{"currency": "USD"}, want: []string{"currency"}, how: "enum"},
		{name: "AED_ACCOUNT takes any currency: USD", kind: "AED_ACCOUNT", set: map[string]any{"currency": "USD"}},
		{name: "AED_ACCOUNT takes any currency: EUR", kind: "AED_ACCOUNT", set: map[string]any{"currency": "EUR"}},
		{name: "AED_ACCOUNT still needs a currency code", kind: "AED_ACCOUNT", set: map[string]any{"currency": "AE"}, want: []string{"currency"}, how: "pattern"},
		{name: "accountInfo is required", kind: "USD_ACCOUNT", set: map[string]any{"accountInfo": absent}, want: []string{"accountInfo"}, how: "required"},
		{name: "accountInfo is an object", kind: "USD_ACCOUNT", set: map[string]any{"accountInfo": []any{}}, want: []string{"accountInfo"}, how: "type"},
		{name: "accountType is required", kind: "USD_ACCOUNT", set: map[string]any{ai("accountType"): absent}, want: []string{ai("accountType")}, how: "required"},
		{name: "accountType is one of the 21", kind: "USD_ACCOUNT", set: map[string]any{ai("accountType"): "CHF_ACCOUNT"}, want: []string{ai("accountType")}, how: "enum"},
		{name: "accountType is case-sensitive", kind: "USD_ACCOUNT", set: map[string]any{ai("accountType"): "usd_account"}, want: []string{ai("accountType")}, how: "enum"},
		{name: "platformAccountId is optional", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": absent}},
		{name: "platformAccountId up to 255", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": strings.Repeat("p", 255)}},
		{name: "platformAccountId over 255", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": strings.Repeat("p", 256)}, want: []string{"platformAccountId"}, how: "length"},
		{name: "platformAccountId empty", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": ""}, want: []string{"platformAccountId"}, how: "length"},
		{name: "platformAccountId is a string", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": 7.0}, want: []string{"platformAccountId"}, how: "type"},
		{name: "customerId is optional", kind: "USD_ACCOUNT", set: map[string]any{"customerId": absent}},
		{name: "customerId null is a platform account", kind: "USD_ACCOUNT", set: map[string]any{"customerId": nil}},
		{name: "customerId upper-case uuid", kind: "USD_ACCOUNT", set: map[string]any{"customerId": "Customer:0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"}},
		{name: "customerId without the prefix", kind: "USD_ACCOUNT", set: map[string]any{"customerId": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, want: []string{"customerId"}, how: "pattern"},
		{name: "customerId of another resource", kind: "USD_ACCOUNT", set: map[string]any{"customerId": "InternalAccount:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, want: []string{"customerId"}, how: "pattern"},
		{name: "customerId with a short uuid", kind: "USD_ACCOUNT", set: map[string]any{"customerId": "Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5"}, want: []string{"customerId"}, how: "pattern"},
		{name: "customerId with a non-hex digit", kind: "USD_ACCOUNT", set: map[string]any{"customerId": "Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g"}, want: []string{"customerId"}, how: "pattern"},
		{name: "customerId is a string", kind: "USD_ACCOUNT", set: map[string]any{"customerId": true}, want: []string{"customerId"}, how: "type"},
		{name: "defaultUmaDepositAccount true", kind: "USD_ACCOUNT", set: map[string]any{"defaultUmaDepositAccount": true}},
		{name: "defaultUmaDepositAccount false", kind: "USD_ACCOUNT", set: map[string]any{"defaultUmaDepositAccount": false}},
		{name: "defaultUmaDepositAccount is a boolean", kind: "USD_ACCOUNT", set: map[string]any{"defaultUmaDepositAccount": "true"}, want: []string{"defaultUmaDepositAccount"}, how: "type"},
		{name: "ownershipType FIRST_PARTY", kind: "USD_ACCOUNT", set: map[string]any{"ownershipType": "FIRST_PARTY"}},
		{name: "ownershipType THIRD_PARTY", kind: "USD_ACCOUNT", set: map[string]any{"ownershipType": "THIRD_PARTY"}},
		{name: "ownershipType other", kind: "USD_ACCOUNT", set: map[string]any{"ownershipType": "SECOND_PARTY"}, want: []string{"ownershipType"}, how: "enum"},
		{name: "null for a string is a wrong type", kind: "USD_ACCOUNT", set: map[string]any{"platformAccountId": nil}, want: []string{"platformAccountId"}, how: "type"},
	})
}

func TestUSDAccount(t *testing.T) {
	k := "USD_ACCOUNT"
	runRows(t, []row{
		{name: "accountNumber required", kind: k, set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "accountNumber 1 character", kind: k, set: map[string]any{ai("accountNumber"): "7"}},
		{name: "accountNumber 34 characters", kind: k, set: map[string]any{ai("accountNumber"): strings.Repeat("1", 34)}},
		{name: "accountNumber 35 characters", kind: k, set: map[string]any{ai("accountNumber"): strings.Repeat("1", 35)}, want: []string{ai("accountNumber")}, how: "length"},
		{name: "accountNumber empty", kind: k, set: map[string]any{ai("accountNumber"): ""}, want: []string{ai("accountNumber")}, how: "length"},
		{name: "accountNumber is a string, not a number", kind: k, set: map[string]any{ai("accountNumber"): 123456789012.0}, want: []string{ai("accountNumber")}, how: "type"},
		{name: "accountNumber with a NUL", kind: k, set: map[string]any{ai("accountNumber"): "1234\x00"}, want: []string{ai("accountNumber")}, how: "other"},
		{name: "routingNumber required", kind: k, set: map[string]any{ai("routingNumber"): absent}, want: []string{ai("routingNumber")}, how: "required"},
		{name: "routingNumber 9 digits", kind: k, set: map[string]any{ai("routingNumber"): "011000015"}},
		{name: "routingNumber 8 digits", kind: k, set: map[string]any{ai("routingNumber"): "02100002"}, want: []string{ai("routingNumber")}, how: "pattern"},
		{name: "routingNumber 10 digits", kind: k, set: map[string]any{ai("routingNumber"): "0210000210"}, want: []string{ai("routingNumber")}, how: "pattern"},
		{name: "routingNumber with a letter", kind: k, set: map[string]any{ai("routingNumber"): "02100002a"}, want: []string{ai("routingNumber")}, how: "pattern"},
		{name: "routingNumber is not trimmed", kind: k, set: map[string]any{ai("routingNumber"): " 021000021"}, want: []string{ai("routingNumber")}, how: "pattern"},
		{name: "bankAccountType optional", kind: k, set: map[string]any{ai("bankAccountType"): absent}},
		{name: "bankAccountType SAVINGS", kind: k, set: map[string]any{ai("bankAccountType"): "SAVINGS"}},
		{name: "bankAccountType other", kind: k, set: map[string]any{ai("bankAccountType"): "BROKERAGE"}, want: []string{ai("bankAccountType")}, how: "enum"},
		{name: "bankAccountType lower case", kind: k, set: map[string]any{ai("bankAccountType"): "checking"}, want: []string{ai("bankAccountType")}, how: "enum"},
		{name: "bankName optional", kind: k, set: map[string]any{ai("bankName"): absent}},
		{name: "bankName a discovery value", kind: k, set: map[string]any{ai("bankName"): "Wells Fargo"}},
		{name: "bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "First Community Credit Union"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName of another country in USD", kind: k, set: map[string]any{ai("bankName"): "Banco Agricola"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName empty", kind: k, set: map[string]any{ai("bankName"): ""}, want: []string{ai("bankName")}, how: "length"},
		{name: "no other members (intermediaryBankName)", kind: k, set: map[string]any{ai("intermediaryBankName"): "Citibank"}, want: []string{ai("intermediaryBankName")}, how: "unknown"},
	})
}

func TestMXNAccount(t *testing.T) {
	k := "MXN_ACCOUNT"
	runRows(t, []row{
		{name: "clabeNumber required", kind: k, set: map[string]any{ai("clabeNumber"): absent}, want: []string{ai("clabeNumber")}, how: "required"},
		{name: "clabeNumber 18 digits", kind: k, set: map[string]any{ai("clabeNumber"): "012180001234567897"}},
		{name: "clabeNumber 17 digits", kind: k, set: map[string]any{ai("clabeNumber"): "01218000123456789"}, want: []string{ai("clabeNumber")}, how: "pattern"},
		{name: "clabeNumber 19 digits", kind: k, set: map[string]any{ai("clabeNumber"): "0121800012345678970"}, want: []string{ai("clabeNumber")}, how: "pattern"},
		{name: "clabeNumber with a space", kind: k, set: map[string]any{ai("clabeNumber"): "012180 01234567897"}, want: []string{ai("clabeNumber")}, how: "pattern"},
		{name: "bankName optional", kind: k, set: map[string]any{ai("bankName"): absent}},
		{name: "bankName a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banorte"}},
		{name: "bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banco Local"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName 256", kind: k, set: map[string]any{ai("bankName"): strings.Repeat("b", 256)}, want: []string{ai("bankName")}, how: "length"},
		{name: "no accountNumber", kind: k, set: map[string]any{ai("accountNumber"): "123"}, want: []string{ai("accountNumber")}, how: "unknown"},
	})
}

func TestBRLAccount(t *testing.T) {
	k := "BRL_ACCOUNT"
	rows := []row{
		{name: "pixKey required", kind: k, set: map[string]any{ai("pixKey"): absent}, want: []string{ai("pixKey")}, how: "required"},
		{name: "pixKey 77 characters", kind: k, set: map[string]any{ai("pixKey"): strings.Repeat("k", 77)}},
		{name: "pixKey 78 characters", kind: k, set: map[string]any{ai("pixKey"): strings.Repeat("k", 78)}, want: []string{ai("pixKey")}, how: "length"},
		{name: "pixKey empty", kind: k, set: map[string]any{ai("pixKey"): ""}, want: []string{ai("pixKey")}, how: "length"},
		{name: "pixKeyType required", kind: k, set: map[string]any{ai("pixKeyType"): absent}, want: []string{ai("pixKeyType")}, how: "required"},
		{name: "pixKeyType other", kind: k, set: map[string]any{ai("pixKeyType"): "IBAN"}, want: []string{ai("pixKeyType")}, how: "enum"},
		{name: "taxId required", kind: k, set: map[string]any{ai("taxId"): absent}, want: []string{ai("taxId")}, how: "required"},
		{name: "taxId 11 digits (CPF)", kind: k, set: map[string]any{ai("taxId"): "12345678901"}},
		{name: "taxId 14 digits (CNPJ)", kind: k, set: map[string]any{ai("taxId"): "12345678000195"}},
		{name: "taxId 10 digits", kind: k, set: map[string]any{ai("taxId"): "1234567890"}, want: []string{ai("taxId")}, how: "pattern"},
		{name: "taxId 15 digits", kind: k, set: map[string]any{ai("taxId"): "123456789012345"}, want: []string{ai("taxId")}, how: "pattern"},
		{name: "taxId with punctuation", kind: k, set: map[string]any{ai("taxId"): "123.456.789-01"}, want: []string{ai("taxId")}, how: "pattern"},
		{name: "bankName optional", kind: k, set: map[string]any{ai("bankName"): absent}},
		{name: "bankName a discovery value", kind: k, set: map[string]any{ai("bankName"): "Nubank"}},
		{name: "bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banco Qualquer"}, want: []string{ai("bankName")}, how: "enum"},
	}
	for _, pt := range []string{"CPF", "CNPJ", "EMAIL", "PHONE", "RANDOM"} {
		rows = append(rows, row{name: "pixKeyType " + pt, kind: k, set: map[string]any{ai("pixKeyType"): pt}})
	}
	runRows(t, rows)
}

func TestCOPAccount(t *testing.T) {
	k, m := "COP_ACCOUNT", "COP_MOBILE"
	runRows(t, []row{
		{name: "bank transfer requires bankName", kind: k, set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "bank transfer requires bankAccountType", kind: k, set: map[string]any{ai("bankAccountType"): absent}, want: []string{ai("bankAccountType")}, how: "required"},
		{name: "bank transfer bankAccountType CHECKING", kind: k, set: map[string]any{ai("bankAccountType"): "CHECKING"}},
		{name: "bank transfer bankAccountType other", kind: k, set: map[string]any{ai("bankAccountType"): "CURRENT"}, want: []string{ai("bankAccountType")}, how: "enum"},
		{name: "bank transfer accountNumber 35 characters", kind: k, set: map[string]any{ai("accountNumber"): strings.Repeat("1", 35)}, want: []string{ai("accountNumber")}, how: "length"},
		{name: "bankName a discovery value", kind: k, set: map[string]any{ai("bankName"): "Davivienda"}},
		{name: "bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banco Falabella"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "mobile money provider not a discovery value", kind: m, set: map[string]any{ai("bankName"): "Movii"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "mobile money requires bankName (the provider)", kind: m, set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "mobile money Daviplata", kind: m, set: map[string]any{ai("bankName"): "Daviplata"}},
		{name: "mobile money phoneNumber international", kind: m, set: map[string]any{ai("phoneNumber"): "+573101234567"}},
		{name: "mobile money phoneNumber without +", kind: m, set: map[string]any{ai("phoneNumber"): "573001234567"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money phoneNumber national", kind: m, set: map[string]any{ai("phoneNumber"): "3001234567"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money phoneNumber 5 digits", kind: m, set: map[string]any{ai("phoneNumber"): "+57300"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money phoneNumber 15 digits", kind: m, set: map[string]any{ai("phoneNumber"): "+573001234567890"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money phoneNumber with spaces", kind: m, set: map[string]any{ai("phoneNumber"): "+57 300 1234567"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money refuses bankAccountType", kind: m, set: map[string]any{ai("bankAccountType"): "SAVINGS"}, want: []string{ai("bankAccountType")}, how: "other"},
		{name: "both accountNumber and phoneNumber", kind: k, set: map[string]any{ai("phoneNumber"): "+573001234567"}, want: []string{ai("accountNumber"), ai("phoneNumber")}, how: "other"},
		{name: "neither accountNumber nor phoneNumber", kind: k, set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber"), ai("phoneNumber")}, how: "other"},
		{name: "neither, and bankName still required", kind: k, set: map[string]any{ai("accountNumber"): absent, ai("bankName"): absent}, want: []string{ai("accountNumber"), ai("bankName"), ai("phoneNumber")}},
		{name: "neither, and a bad bankAccountType still reported", kind: k, set: map[string]any{ai("accountNumber"): absent, ai("bankAccountType"): "X"}, want: []string{ai("accountNumber"), ai("bankAccountType"), ai("phoneNumber")}},
		{name: "documentType CC with documentNumber", kind: k},
		{name: "documentType NIT", kind: k, set: map[string]any{ben("documentType"): "NIT"}},
		{name: "provider is not a COP member", kind: m, set: map[string]any{ai("provider"): "NEQUI"}, want: []string{ai("provider")}, how: "unknown"},
	})
}

func TestSLVAccount(t *testing.T) {
	k, m := "SLV_ACCOUNT", "SLV_MOBILE"
	runRows(t, []row{
		{name: "bank transfer requires bankName", kind: k, set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "bank transfer requires bankAccountType", kind: k, set: map[string]any{ai("bankAccountType"): absent}, want: []string{ai("bankAccountType")}, how: "required"},
		{name: "bank transfer bankName a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banco Cuscatlan"}},
		{name: "bank transfer bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "Banco Inexistente"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bank transfer bankName of Colombia", kind: k, set: map[string]any{ai("bankName"): "Bancolombia"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bank transfer bankAccountType SAVINGS", kind: k, set: map[string]any{ai("bankAccountType"): "SAVINGS"}},
		{name: "bank transfer bankAccountType other", kind: k, set: map[string]any{ai("bankAccountType"): "SAVING"}, want: []string{ai("bankAccountType")}, how: "enum"},
		{name: "bank transfer accountNumber empty", kind: k, set: map[string]any{ai("accountNumber"): ""}, want: []string{ai("accountNumber")}, how: "length"},
		{name: "mobile money: phoneNumber alone", kind: m},
		{name: "mobile money: bankName optional but checked", kind: m, set: map[string]any{ai("bankName"): ""}, want: []string{ai("bankName")}, how: "length"},
		{name: "mobile money: provider Tigo Money", kind: m, set: map[string]any{ai("bankName"): "Tigo Money"}},
		{name: "mobile money: provider not a discovery value", kind: m, set: map[string]any{ai("bankName"): "Chivo"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "mobile money phoneNumber national", kind: m, set: map[string]any{ai("phoneNumber"): "70001234"}, want: []string{ai("phoneNumber")}, how: "pattern"},
		{name: "mobile money phoneNumber 14 digits", kind: m, set: map[string]any{ai("phoneNumber"): "+50370001234567"}},
		{name: "mobile money refuses bankAccountType", kind: m, set: map[string]any{ai("bankAccountType"): "CHECKING"}, want: []string{ai("bankAccountType")}, how: "other"},
		{name: "both", kind: k, set: map[string]any{ai("phoneNumber"): "+50370001234"}, want: []string{ai("accountNumber"), ai("phoneNumber")}, how: "other"},
		{name: "neither", kind: m, set: map[string]any{ai("phoneNumber"): absent}, want: []string{ai("accountNumber"), ai("phoneNumber")}, how: "other"},
	})
}

func TestEURAccount(t *testing.T) {
	k := "EUR_ACCOUNT"
	runRows(t, []row{
		{name: "iban required", kind: k, set: map[string]any{ai("iban"): absent}, want: []string{ai("iban")}, how: "required"},
		{name: "iban FR with a letter", kind: k, set: map[string]any{ai("iban"): "FR1420041010050500013M02606"}},
		{name: "iban with a lower-case BBAN letter", kind: k, set: map[string]any{ai("iban"): "FR1420041010050500013m02606"}},
		{name: "iban NL", kind: k, set: map[string]any{ai("iban"): "NL91ABNA0417164300"}},
		{name: "iban one digit changed: checksum", kind: k, set: map[string]any{ai("iban"): "DE89370400440532013001"}, want: []string{ai("iban")}, how: "format"},
		{name: "iban two digits swapped: checksum", kind: k, set: map[string]any{ai("iban"): "DE89370400440532010300"}, want: []string{ai("iban")}, how: "format"},
		{name: "iban check digits 00", kind: k, set: map[string]any{ai("iban"): "DE00370400440532013000"}, want: []string{ai("iban")}, how: "format"},
		{name: "iban with spaces", kind: k, set: map[string]any{ai("iban"): "DE89 3704 0044 0532 0130 00"}, want: []string{ai("iban")}, how: "pattern"},
		{name: "iban lower-case country", kind: k, set: map[string]any{ai("iban"): "de89370400440532013000"}, want: []string{ai("iban")}, how: "pattern"},
		{name: "iban 14 characters", kind: k, set: map[string]any{ai("iban"): "DE893704004405"}, want: []string{ai("iban")}, how: "pattern"},
		{name: "iban 35 characters", kind: k, set: map[string]any{ai("iban"): "DE89" + strings.Repeat("1", 31)}, want: []string{ai("iban")}, how: "pattern"},
		{name: "swiftCode optional", kind: k, set: map[string]any{ai("swiftCode"): absent}},
		{name: "swiftCode 11 characters", kind: k, set: map[string]any{ai("swiftCode"): "DEUTDEFF500"}},
		{name: "swiftCode 9 characters", kind: k, set: map[string]any{ai("swiftCode"): "DEUTDEFF5"}, want: []string{ai("swiftCode")}, how: "pattern"},
		{name: "swiftCode lower case", kind: k, set: map[string]any{ai("swiftCode"): "deutdeff"}, want: []string{ai("swiftCode")}, how: "pattern"},
		{name: "swiftCode digit in the country", kind: k, set: map[string]any{ai("swiftCode"): "DEUTD3FF"}, want: []string{ai("swiftCode")}, how: "pattern"},
		{name: "bankName optional", kind: k, set: map[string]any{ai("bankName"): absent}},
		{name: "bankName a discovery value of any euro country", kind: k, set: map[string]any{ai("bankName"): "Intesa Sanpaolo"}},
		{name: "bankName not a discovery value", kind: k, set: map[string]any{ai("bankName"): "Sparkasse KölnBonn"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName of a non-euro bank", kind: k, set: map[string]any{ai("bankName"): "Wells Fargo"}, want: []string{ai("bankName")}, how: "enum"},
	})
}

func TestPHPAccount(t *testing.T) {
	k := "PHP_ACCOUNT"
	runRows(t, []row{
		{name: "bankName required", kind: k, set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "bankName BPI is a discovery value", kind: k, set: map[string]any{ai("bankName"): "BPI"}},
		{name: "bankName a displayName is not", kind: k, set: map[string]any{ai("bankName"): "Bank of the Philippine Islands"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName other case", kind: k, set: map[string]any{ai("bankName"): "bdo unibank"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "bankName of another country", kind: k, set: map[string]any{ai("bankName"): "Standard Bank"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "accountNumber required", kind: k, set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "accountNumber 8 digits", kind: k, set: map[string]any{ai("accountNumber"): "12345678"}},
		{name: "accountNumber 16 digits", kind: k, set: map[string]any{ai("accountNumber"): "1234567890123456"}},
		{name: "accountNumber 7 digits", kind: k, set: map[string]any{ai("accountNumber"): "1234567"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "accountNumber 17 digits", kind: k, set: map[string]any{ai("accountNumber"): "12345678901234567"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "accountNumber with a dash", kind: k, set: map[string]any{ai("accountNumber"): "1234-5678"}, want: []string{ai("accountNumber")}, how: "pattern"},
	})
	errs := ValidateCreate(func() map[string]any {
		b := base(k)
		set(b, ai("bankName"), "Nope")
		return b
	}())
	if len(errs) != 1 || !slices.Contains(errs[0].Constraint.Enum, "BDO Unibank") || !slices.Contains(errs[0].Constraint.Enum, "BPI") {
		t.Errorf("unknown PH bank: want an Enum of the discovery names:%s", dump(errs))
	}
}

func TestGBPAccount(t *testing.T) {
	k := "GBP_ACCOUNT"
	runRows(t, []row{
		{name: "sortCode required", kind: k, set: map[string]any{ai("sortCode"): absent}, want: []string{ai("sortCode")}, how: "required"},
		{name: "sortCode 5 digits", kind: k, set: map[string]any{ai("sortCode"): "04000"}, want: []string{ai("sortCode")}, how: "pattern"},
		{name: "sortCode 7 digits", kind: k, set: map[string]any{ai("sortCode"): "0400044"}, want: []string{ai("sortCode")}, how: "pattern"},
		{name: "sortCode with dashes", kind: k, set: map[string]any{ai("sortCode"): "04-00-04"}, want: []string{ai("sortCode")}, how: "pattern"},
		{name: "accountNumber required", kind: k, set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "accountNumber 7 digits", kind: k, set: map[string]any{ai("accountNumber"): "1234567"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "accountNumber 9 digits", kind: k, set: map[string]any{ai("accountNumber"): "123456789"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "accountNumber other 8 digits", kind: k, set: map[string]any{ai("accountNumber"): "00000001"}},
	})
}

func TestINRAccount(t *testing.T) {
	k := "INR_ACCOUNT"
	runRows(t, []row{
		{name: "vpa required", kind: k, set: map[string]any{ai("vpa"): absent}, want: []string{ai("vpa")}, how: "required"},
		{name: "vpa with dot, dash, underscore", kind: k, set: map[string]any{ai("vpa"): "a.b-c_d@ybl"}},
		{name: "vpa 3 characters", kind: k, set: map[string]any{ai("vpa"): "a@b"}},
		{name: "vpa 2 characters", kind: k, set: map[string]any{ai("vpa"): "a@"}, want: []string{ai("vpa")}, how: "length"},
		{name: "vpa 256 characters", kind: k, set: map[string]any{ai("vpa"): strings.Repeat("a", 250) + "@okaxis"}, want: []string{ai("vpa")}, how: "length"},
		{name: "vpa 255 characters", kind: k, set: map[string]any{ai("vpa"): strings.Repeat("a", 248) + "@okaxis"}},
		{name: "vpa without @", kind: k, set: map[string]any{ai("vpa"): "anadiaz"}, want: []string{ai("vpa")}, how: "pattern"},
		{name: "vpa with a dot in the handle", kind: k, set: map[string]any{ai("vpa"): "ana@ok.hdfc"}, want: []string{ai("vpa")}, how: "pattern"},
		{name: "vpa with two @", kind: k, set: map[string]any{ai("vpa"): "ana@x@ybl"}, want: []string{ai("vpa")}, how: "pattern"},
		{name: "vpa with a space", kind: k, set: map[string]any{ai("vpa"): "ana diaz@ybl"}, want: []string{ai("vpa")}, how: "pattern"},
	})
}

func TestNGNAndZARAccounts(t *testing.T) {
	runRows(t, []row{
		{name: "NGN accountNumber required", kind: "NGN_ACCOUNT", set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "NGN accountNumber 9 digits", kind: "NGN_ACCOUNT", set: map[string]any{ai("accountNumber"): "012345678"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "NGN accountNumber 11 digits", kind: "NGN_ACCOUNT", set: map[string]any{ai("accountNumber"): "01234567890"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "NGN bankName required", kind: "NGN_ACCOUNT", set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "NGN bankName Zenith Bank", kind: "NGN_ACCOUNT", set: map[string]any{ai("bankName"): "Zenith Bank"}},
		{name: "NGN bankName not a discovery value", kind: "NGN_ACCOUNT", set: map[string]any{ai("bankName"): "First Bank"}, want: []string{ai("bankName")}, how: "enum"},
		{name: "ZAR accountNumber required", kind: "ZAR_ACCOUNT", set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "ZAR accountNumber 13 digits", kind: "ZAR_ACCOUNT", set: map[string]any{ai("accountNumber"): "1234567890123"}},
		{name: "ZAR accountNumber 8 digits", kind: "ZAR_ACCOUNT", set: map[string]any{ai("accountNumber"): "12345678"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "ZAR accountNumber 14 digits", kind: "ZAR_ACCOUNT", set: map[string]any{ai("accountNumber"): "12345678901234"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "ZAR bankName required", kind: "ZAR_ACCOUNT", set: map[string]any{ai("bankName"): absent}, want: []string{ai("bankName")}, how: "required"},
		{name: "ZAR bankName Capitec Bank", kind: "ZAR_ACCOUNT", set: map[string]any{ai("bankName"): "Capitec Bank"}},
		{name: "ZAR bankName of Nigeria", kind: "ZAR_ACCOUNT", set: map[string]any{ai("bankName"): "First Bank of Nigeria"}, want: []string{ai("bankName")}, how: "enum"},
	})
}

// TestMobileMoney: phone prefix and digit count, and the provider list, of
// every mobile-money currency.
func TestMobileMoney(t *testing.T) {
	cases := []struct {
		kind, prefix, otherPrefix string
		providers                 []string // the spec's count: 1, 2, 4, 2, 2, 2
	}{
		{"KES_ACCOUNT", "+254", "+255", []string{"M-PESA"}},
		{"TZS_ACCOUNT", "+255", "+254", []string{"AIRTEL", "VODACOM"}},
		{"ZMW_ACCOUNT", "+260", "+265", []string{"TNM", "AIRTEL", "ZAMTEL", "MTN"}},
		{"RWF_ACCOUNT", "+250", "+256", []string{"MTN", "AIRTEL"}},
		{"MWK_ACCOUNT", "+265", "+260", []string{"AIRTEL", "TNM"}},
		{"UGX_ACCOUNT", "+256", "+250", []string{"MTN", "AIRTEL"}},
	}
	counts := map[string]int{"KES_ACCOUNT": 1, "TZS_ACCOUNT": 2, "ZMW_ACCOUNT": 4, "RWF_ACCOUNT": 2, "MWK_ACCOUNT": 2, "UGX_ACCOUNT": 2}
	var rows []row
	for _, c := range cases {
		k := c.kind
		if len(c.providers) != counts[k] {
			t.Fatalf("%s: test lists %d providers, the spec says %d", k, len(c.providers), counts[k])
		}
		v := lookup(k)
		for _, f := range v.fields(nil, "", &report{}) {
			if f.name == "provider" && !slices.Equal(f.rule.enum, c.providers) {
				t.Errorf("%s providers = %v, want %v", k, f.rule.enum, c.providers)
			}
		}
		p := ai("phoneNumber")
		rows = append(rows,
			row{name: k + " phoneNumber required", kind: k, set: map[string]any{p: absent}, want: []string{p}, how: "required"},
			row{name: k + " phoneNumber " + c.prefix + " and 9 digits", kind: k, set: map[string]any{p: c.prefix + "700000001"}},
			row{name: k + " phoneNumber " + c.prefix + " and 8 digits", kind: k, set: map[string]any{p: c.prefix + "70000000"}, want: []string{p}, how: "pattern"},
			row{name: k + " phoneNumber " + c.prefix + " and 10 digits", kind: k, set: map[string]any{p: c.prefix + "7000000001"}, want: []string{p}, how: "pattern"},
			row{name: k + " phoneNumber of another country " + c.otherPrefix, kind: k, set: map[string]any{p: c.otherPrefix + "700000001"}, want: []string{p}, how: "pattern"},
			row{name: k + " phoneNumber without +", kind: k, set: map[string]any{p: c.prefix[1:] + "700000001"}, want: []string{p}, how: "pattern"},
			row{name: k + " phoneNumber national", kind: k, set: map[string]any{p: "0700000001"}, want: []string{p}, how: "pattern"},
			row{name: k + " phoneNumber trailing space", kind: k, set: map[string]any{p: c.prefix + "700000001 "}, want: []string{p}, how: "pattern"},
			row{name: k + " provider required", kind: k, set: map[string]any{ai("provider"): absent}, want: []string{ai("provider")}, how: "required"},
			row{name: k + " provider of no list", kind: k, set: map[string]any{ai("provider"): "SAFARICOM"}, want: []string{ai("provider")}, how: "enum"},
			row{name: k + " provider lower case", kind: k, set: map[string]any{ai("provider"): strings.ToLower(c.providers[0])}, want: []string{ai("provider")}, how: "enum"},
			row{name: k + " no region", kind: k, set: map[string]any{ai("region"): "KE"}, want: []string{ai("region")}, how: "unknown"},
		)
		for _, pr := range c.providers {
			rows = append(rows, row{name: k + " provider " + pr, kind: k, set: map[string]any{ai("provider"): pr}})
		}
		// A provider of another currency's list is refused.
		for _, other := range []string{"VODACOM", "ZAMTEL", "TNM", "MTN", "M-PESA"} {
			if !slices.Contains(c.providers, other) {
				rows = append(rows, row{name: k + " provider " + other + " is not in its list", kind: k, set: map[string]any{ai("provider"): other}, want: []string{ai("provider")}, how: "enum"})
				break
			}
		}
	}
	runRows(t, rows)
}

func TestXOFAccount(t *testing.T) {
	k, p, r := "XOF_ACCOUNT", ai("phoneNumber"), ai("region")
	rows := []row{
		{name: "+221 then 9 digits (SN)", kind: k, set: map[string]any{p: "+221771234567", r: "SN"}},
		{name: "+221 then 8 digits", kind: k, set: map[string]any{p: "+22177123456", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+221 then 10 digits", kind: k, set: map[string]any{p: "+2217712345678", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+225 then 10 digits (CI)", kind: k, set: map[string]any{p: "+2250701234567", r: "CI"}},
		{name: "+225 then 9 digits", kind: k, set: map[string]any{p: "+225070123456", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+225 then 11 digits", kind: k, set: map[string]any{p: "+22507012345678", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+229 then 8 digits (BJ)", kind: k, set: map[string]any{p: "+22997123456", r: "BJ"}},
		{name: "+229 then 9 digits (BJ)", kind: k, set: map[string]any{p: "+229971234567", r: "BJ"}},
		{name: "+229 then 7 digits", kind: k, set: map[string]any{p: "+2299712345", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+229 then 10 digits", kind: k, set: map[string]any{p: "+2299712345678", r: absent}, want: []string{p}, how: "pattern"},
		{name: "+228 (Togo) has no form in the spec", kind: k, set: map[string]any{p: "+22890123456", r: absent}, want: []string{p}, how: "pattern"},
		{name: "phoneNumber required", kind: k, set: map[string]any{p: absent}, want: []string{p}, how: "required"},
		{name: "region optional", kind: k, set: map[string]any{r: absent}},
		{name: "region must match the prefix: CI with +221", kind: k, set: map[string]any{r: "CI"}, want: []string{r}, how: "enum"},
		{name: "region must match the prefix: SN with +229", kind: k, set: map[string]any{p: "+22997123456", r: "SN"}, want: []string{r}, how: "enum"},
		{name: "region TG never matches", kind: k, set: map[string]any{r: "TG"}, want: []string{r}, how: "enum"},
		{name: "region outside BJ|CI|SN|TG", kind: k, set: map[string]any{r: "GH"}, want: []string{r}, how: "enum"},
		{name: "region with a bad phone: only the phone reported", kind: k, set: map[string]any{p: "+2217", r: "CI"}, want: []string{p}, how: "pattern"},
		{name: "provider required", kind: k, set: map[string]any{ai("provider"): absent}, want: []string{ai("provider")}, how: "required"},
		{name: "provider AIRTEL is not an XOF operator", kind: k, set: map[string]any{ai("provider"): "AIRTEL"}, want: []string{ai("provider")}, how: "enum"},
	}
	for _, pr := range []string{"MTN", "ORANGE", "WAVE", "MOOV", "FREE"} {
		rows = append(rows, row{name: "provider " + pr, kind: k, set: map[string]any{ai("provider"): pr}})
	}
	runRows(t, rows)
}

func TestCADAccount(t *testing.T) {
	k := "CAD_ACCOUNT"
	runRows(t, []row{
		{name: "bankCode required", kind: k, set: map[string]any{ai("bankCode"): absent}, want: []string{ai("bankCode")}, how: "required"},
		{name: "bankCode 2 digits", kind: k, set: map[string]any{ai("bankCode"): "01"}, want: []string{ai("bankCode")}, how: "pattern"},
		{name: "bankCode 4 digits", kind: k, set: map[string]any{ai("bankCode"): "0001"}, want: []string{ai("bankCode")}, how: "pattern"},
		{name: "branchCode required", kind: k, set: map[string]any{ai("branchCode"): absent}, want: []string{ai("branchCode")}, how: "required"},
		{name: "branchCode 4 digits", kind: k, set: map[string]any{ai("branchCode"): "0001"}, want: []string{ai("branchCode")}, how: "pattern"},
		{name: "branchCode 6 digits", kind: k, set: map[string]any{ai("branchCode"): "000111"}, want: []string{ai("branchCode")}, how: "pattern"},
		{name: "accountNumber required", kind: k, set: map[string]any{ai("accountNumber"): absent}, want: []string{ai("accountNumber")}, how: "required"},
		{name: "accountNumber 12 digits", kind: k, set: map[string]any{ai("accountNumber"): "123456789012"}},
		{name: "accountNumber 6 digits", kind: k, set: map[string]any{ai("accountNumber"): "123456"}, want: []string{ai("accountNumber")}, how: "pattern"},
		{name: "accountNumber 13 digits", kind: k, set: map[string]any{ai("accountNumber"): "1234567890123"}, want: []string{ai("accountNumber")}, how: "pattern"},
	})
}

func TestAEDAccount(t *testing.T) {
	k := "AED_ACCOUNT"
	bad := []byte(aeIBAN)
	bad[len(bad)-1] = '0' + (bad[len(bad)-1]-'0'+1)%10
	runRows(t, []row{
		{name: "iban required", kind: k, set: map[string]any{ai("iban"): absent}, want: []string{ai("iban")}, how: "required"},
		{name: "iban AE then 21 digits with good check digits", kind: k},
		{name: "iban check digits wrong", kind: k, set: map[string]any{ai("iban"): string(bad)}, want: []string{ai("iban")}, how: "format"},
		{name: "iban AE then 20 digits", kind: k, set: map[string]any{ai("iban"): aeIBAN[:22]}, want: []string{ai("iban")}, how: "pattern"},
		{name: "iban of Germany", kind: k, set: map[string]any{ai("iban"): "DE89370400440532013000"}, want: []string{ai("iban")}, how: "pattern"},
		{name: "iban with a letter", kind: k, set: map[string]any{ai("iban"): "AE07033123456789012345A"}, want: []string{ai("iban")}, how: "pattern"},
		{name: "swiftCode optional", kind: k, set: map[string]any{ai("swiftCode"): absent}},
		{name: "swiftCode bad", kind: k, set: map[string]any{ai("swiftCode"): "EBIL"}, want: []string{ai("swiftCode")}, how: "pattern"},
		{name: "no bankName", kind: k, set: map[string]any{ai("bankName"): "Emirates NBD"}, want: []string{ai("bankName")}, how: "unknown"},
	})
}

func TestSparkWallet(t *testing.T) {
	k, a := "SPARK_WALLET", ai("address")
	upper := strings.ToUpper(sparkM)
	mixed := "Spark1" + sparkM[6:]
	li := strings.IndexFunc(sparkM[40:], func(c rune) bool { return c >= 'a' && c <= 'z' }) + 40
	mixedData := sparkM[:li] + strings.ToUpper(sparkM[li:li+1]) + sparkM[li+1:]
	withB := sparkM[:30] + "b" + sparkM[31:] // b is not in the bech32 alphabet
	runRows(t, []row{
		{name: "bech32m address (Spark SDKs)", kind: k, set: map[string]any{a: sparkM}},
		{name: "bech32 address (BIP-173 constant)", kind: k, set: map[string]any{a: sparkB}},
		{name: "upper-case address", kind: k, set: map[string]any{a: upper}},
		{name: "address required", kind: k, set: map[string]any{a: absent}, want: []string{a}, how: "required"},
		{name: "one character corrupted", kind: k, set: map[string]any{a: corrupt(sparkM, 50)}, want: []string{a}, how: "format"},
		{name: "last character corrupted", kind: k, set: map[string]any{a: corrupt(sparkM, 86)}, want: []string{a}, how: "format"},
		{name: "first data character corrupted", kind: k, set: map[string]any{a: corrupt(sparkB, 6)}, want: []string{a}, how: "format"},
		{name: "mixed-case prefix", kind: k, set: map[string]any{a: mixed}, want: []string{a}, how: "format"},
		{name: "mixed-case data", kind: k, set: map[string]any{a: mixedData}, want: []string{a}, how: "format"},
		{name: "character outside the alphabet", kind: k, set: map[string]any{a: withB}, want: []string{a}, how: "format"},
		{name: "86 characters", kind: k, set: map[string]any{a: sparkM[:86]}, want: []string{a}, how: "length"},
		{name: "88 characters", kind: k, set: map[string]any{a: sparkM + "q"}, want: []string{a}, how: "length"},
		{name: "87 characters not starting with spark1", kind: k, set: map[string]any{a: "spurk1" + sparkM[6:]}, want: []string{a}, how: "pattern"},
		{name: "prefix with the long s (ſ), which Unicode folds to s", kind: k, set: map[string]any{a: "ſpark1" + sparkM[6:]}, want: []string{a}, how: "pattern"},
		{name: "a bitcoin address", kind: k, set: map[string]any{a: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}, want: []string{a}, how: "length"},
		{name: "87 characters with a non-ASCII one", kind: k, set: map[string]any{a: sparkM[:80] + "é" + sparkM[81:]}, want: []string{a}, how: "format"},
		{name: "beneficiary refused", kind: k, set: map[string]any{ai("beneficiary"): minimalIndividual()}, want: []string{ai("beneficiary")}, how: "other"},
		{name: "beneficiary refused even empty", kind: k, set: map[string]any{ai("beneficiary"): map[string]any{}}, want: []string{ai("beneficiary")}, how: "other"},
		{name: "no other members (vaspName)", kind: k, set: map[string]any{ai("vaspName"): "x"}, want: []string{ai("vaspName")}, how: "unknown"},
	})
	if len(sparkM) != 87 || len(sparkB) != 87 || !strings.HasPrefix(sparkM, "spark1") {
		t.Fatalf("generated addresses: %q %q", sparkM, sparkB)
	}
}

// TestChecksums checks the checksum functions on known values.
func TestChecksums(t *testing.T) {
	for _, iban := range []string{"DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300", "BE68539007547034", "IT60X0542811101000000123456", "ES9121000418450200051332", aeIBAN} {
		if !ibanValid(iban) {
			t.Errorf("ibanValid(%s) = false", iban)
		}
	}
	for _, iban := range []string{"GB82WEST12345698765431", "DE01370400440532013000", "DE99370400440532013000", "XX"} {
		if ibanValid(iban) {
			t.Errorf("ibanValid(%s) = true", iban)
		}
	}
	// The BIP-173 and BIP-350 test strings (published vectors).
	for _, tc := range []struct {
		s    string
		want uint32
	}{
		{"a12uel5l", bech32Const},
		{"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", bech32Const},
		{"a1lqfn3a", bech32mConst},
		{"abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx", bech32mConst},
	} {
		i := strings.LastIndexByte(tc.s, '1')
		var data []byte
		for _, c := range []byte(tc.s[i+1:]) {
			data = append(data, byte(strings.IndexByte(bech32Alphabet, c)))
		}
		if got := bech32Polymod(tc.s[:i], data); got != tc.want {
			t.Errorf("polymod(%s) = %#x, want %#x", tc.s, got, tc.want)
		}
	}
}

func TestPrimaryIdentifier(t *testing.T) {
	want := map[string]string{
		"USD_ACCOUNT": "123456789012", "MXN_ACCOUNT": "002010077777777771", "BRL_ACCOUNT": "ana.002",
		"COP_ACCOUNT": "1234567890", "COP_MOBILE": "+573001234567", "SLV_ACCOUNT": "1234567890", "SLV_MOBILE": "+50370001234",
		"EUR_ACCOUNT": "DE89370400440532013000", "PHP_ACCOUNT": "001234567890", "GBP_ACCOUNT": "12345678",
		"INR_ACCOUNT": "ana.diaz", "NGN_ACCOUNT": "0123456789", "ZAR_ACCOUNT": "123456789",
		"KES_ACCOUNT": "+254712345678", "TZS_ACCOUNT": "+255712345678", "ZMW_ACCOUNT": "+260971234567",
		"RWF_ACCOUNT": "+250781234567", "MWK_ACCOUNT": "+265991234567", "UGX_ACCOUNT": "+256771234567",
		"XOF_ACCOUNT": "+221771234567", "CAD_ACCOUNT": "1234567", "AED_ACCOUNT": aeIBAN, "SPARK_WALLET": sparkM,
	}
	for _, k := range baseKinds {
		info := base(k)["accountInfo"].(map[string]any)
		if got := PrimaryIdentifier(info); got != want[k] {
			t.Errorf("%s: PrimaryIdentifier = %q, want %q", k, got, want[k])
		}
	}
	if PrimaryIdentifier(map[string]any{"accountType": "X"}) != "" || PrimaryIdentifier(nil) != "" {
		t.Error("PrimaryIdentifier of an unknown type should be empty")
	}
	brl := base("BRL_ACCOUNT")["accountInfo"].(map[string]any)
	brl["pixKey"], brl["pixKeyType"] = "12345678002", "CPF"
	if got := PrimaryIdentifier(brl); got != "12345678002" {
		t.Errorf("CPF pixKey: %q", got)
	}
}

package service

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// individualBody is a create body with every field of an INDIVIDUAL
// customer.
func individualBody(pcid, email string) map[string]any {
	return map[string]any{
		"customerType": "INDIVIDUAL", "platformCustomerId": pcid, "email": email,
		"region": "US", "currencies": []string{"USD", "EUR"}, "phoneNumber": "+14155551234",
		"umaAddress": "$jane." + pcid + "@uma.example",
		"endUserTermsConsent": map[string]any{"acceptedAt": "2026-01-02T03:04:05Z", "ipAddress": "198.51.100.24",
			"termsVersion": "V1", "acceptanceMethod": "CHECKBOX"},
		"fullName": "Jane Smith", "birthDate": "1990-01-15", "nationality": "US",
		"address": map[string]any{"line1": "123 Main Street", "line2": "Apt 4B", "city": "San Francisco", "state": "CA",
			"postalCode": "94105", "country": "US"},
		"idType": "SSN", "identifier": "123-45-6789", "countryOfIssuance": "US",
		"sourceOfFundsCategories": []string{"SALARY", "OTHER"}, "sourceOfFundsOtherDescription": "Contest winnings",
		"sourceOfWealthCategories": []string{"INVESTMENTS"}, "purposeOfAccount": "P2P_TRANSFERS",
		"expectedMonthlyTransactionCount": "COUNT_10_TO_100", "expectedMonthlyTransactionVolume": "VOLUME_UNDER_10K",
		"annualIncomeRange": "RANGE_50K_100K", "netWorthRange": "UNDER_100K", "pepStatus": "NONE",
	}
}

// businessBody is a create body with every field of a BUSINESS customer.
func businessBody(pcid string) map[string]any {
	return map[string]any{
		"customerType": "BUSINESS", "platformCustomerId": pcid, "email": pcid + "@acme.example",
		"region": "US", "currencies": []string{"USD"}, "phoneNumber": "+14155559876",
		"address": map[string]any{"line1": "123 Market Street", "postalCode": "98101", "country": "US"},
		"businessInfo": map[string]any{
			"legalName": "Acme Corporation", "doingBusinessAs": "Acme", "country": "US", "registrationNumber": "5523041",
			"incorporatedOn": "2018-03-14", "entityType": "LLC", "taxId": "47-1234567", "countriesOfOperation": []string{"US", "MX"},
			"businessType": "INFORMATION", "purposeOfAccount": "OTHER", "purposeOfAccountOtherDescription": "Escrow",
			"sourceOfFunds": "Customer payments", "expectedMonthlyTransactionCount": "COUNT_100_TO_500",
			"expectedMonthlyTransactionVolume": "VOLUME_100K_TO_1M", "expectedRecipientJurisdictions": []string{"US"},
			"naicsCode": "541511", "sourceOfFundsCategories": []string{"OPERATING_REVENUE"},
			"expectedCounterpartyCountries": []string{"US", "CA"}, "primaryContactFirstName": "Jane", "primaryContactLastName": "Smith",
		},
	}
}

// asMap is v as the generic JSON object it encodes to.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantFields checks that every member of sent appears in got with the same
// value (identifier excepted: it must be absent).
func wantFields(t *testing.T, what string, got []byte, sent map[string]any) {
	t.Helper()
	if strings.Contains(string(got), "identifier") || strings.Contains(string(got), "123-45-6789") {
		t.Fatalf("%s: the identifier is in the answer: %s", what, got)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	want := asMap(t, sent)
	for k, v := range want {
		if k == "identifier" {
			continue
		}
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("%s: %s = %v, want %v", what, k, m[k], v)
		}
	}
}

func TestCustomerFieldsRoundTrip(t *testing.T) { onBothStores(t, testCustomerFieldsRoundTrip) }

func testCustomerFieldsRoundTrip(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	for _, body := range []map[string]any{individualBody("ind-1", "jane@example.com"), businessBody("biz-1")} {
		r := e.do("POST", "/customers", body, nil)
		e.mustStatus(r, http.StatusCreated)
		wantFields(t, "create", r.body, body)
		var c wire.Customer
		r.decode(t, &c)
		if c.IsDeleted || c.KYCStatus != "" || c.KYBStatus != "" || !strings.Contains(string(r.body), `"isDeleted":false`) {
			t.Fatalf("production create: %s", r.body)
		}
		r = e.do("GET", "/customers/"+c.ID, nil, nil)
		e.mustStatus(r, http.StatusOK)
		wantFields(t, "get", r.body, body)
		r = e.do("GET", "/customers?platformCustomerId="+c.PlatformCustomerID, nil, nil)
		e.mustStatus(r, http.StatusOK)
		var list struct{ Data []json.RawMessage }
		r.decode(t, &list)
		if len(list.Data) != 1 {
			t.Fatalf("list %s", r.body)
		}
		wantFields(t, "list", list.Data[0], body)

		// An update changes what it names and keeps the rest.
		var patch map[string]any
		if c.CustomerType == "INDIVIDUAL" {
			patch = map[string]any{"customerType": "INDIVIDUAL", "phoneNumber": "+447700900123", "currencies": []string{"GBP"},
				"birthDate": "1991-02-03", "nationality": "GB", "idType": "ITIN", "identifier": "912-34-5678",
				"address":          map[string]any{"line1": "1 High Street", "postalCode": "SW1A 1AA", "country": "GB"},
				"purposeOfAccount": "OTHER", "purposeOfAccountOtherDescription": "Household budgeting"}
		} else {
			patch = map[string]any{"customerType": "BUSINESS", "phoneNumber": "+14155550000",
				"businessInfo": map[string]any{"legalName": "Acme Corp II", "naicsCode": "54", "countriesOfOperation": []string{"CA"}}}
		}
		r = e.do("PATCH", "/customers/"+c.ID, patch, nil)
		e.mustStatus(r, http.StatusOK)
		merged := asMap(t, body)
		for k, v := range asMap(t, patch) {
			if k == "businessInfo" {
				bi := merged["businessInfo"].(map[string]any)
				for bk, bv := range v.(map[string]any) {
					bi[bk] = bv
				}
				continue
			}
			merged[k] = v
		}
		wantFields(t, "update", r.body, merged)
		r = e.do("GET", "/customers/"+c.ID, nil, nil)
		wantFields(t, "get after update", r.body, merged)
		if c.CustomerType == "BUSINESS" && strings.Contains(string(r.body), "fullName") {
			t.Fatalf("a business answers individual fields: %s", r.body)
		}
	}
	// platformCustomerId is optional: one is generated, unique.
	r := e.do("POST", "/customers", map[string]any{"customerType": "INDIVIDUAL"}, nil)
	e.mustStatus(r, http.StatusCreated)
	var c wire.Customer
	r.decode(t, &c)
	if len(c.PlatformCustomerID) != 32 {
		t.Fatalf("generated platformCustomerId %q", c.PlatformCustomerID)
	}
	r = e.do("POST", "/customers", map[string]any{"customerType": "INDIVIDUAL", "platformCustomerId": c.PlatformCustomerID}, nil)
	e.mustStatus(r, http.StatusConflict)
}

func TestCustomerFieldRefusals(t *testing.T) {
	e := newEnv(t)
	with := func(base map[string]any, change map[string]any) map[string]any {
		out := asMap(t, base)
		for k, v := range change {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	ind := individualBody("ind-r", "r@example.com")
	biz := businessBody("biz-r")
	bizInfo := func(change map[string]any) map[string]any {
		bi := asMap(t, biz["businessInfo"])
		for k, v := range change {
			if v == nil {
				delete(bi, k)
			} else {
				bi[k] = v
			}
		}
		return bi
	}
	tests := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"birthDate not a date", with(ind, map[string]any{"birthDate": "1990-02-30"}), []string{"birthDate"}},
		{"birthDate format", with(ind, map[string]any{"birthDate": "15/01/1990"}), []string{"birthDate"}},
		{"birthDate in the future", with(ind, map[string]any{"birthDate": "2999-01-01"}), []string{"birthDate"}},
		{"birthDate too old", with(ind, map[string]any{"birthDate": "1800-01-01"}), []string{"birthDate"}},
		{"nationality", with(ind, map[string]any{"nationality": "XX"}), []string{"nationality"}},
		{"region lower case", with(ind, map[string]any{"region": "us"}), []string{"region"}},
		{"phone", with(ind, map[string]any{"phoneNumber": "4155551234"}), []string{"phoneNumber"}},
		{"currency unknown and duplicate", with(ind, map[string]any{"currencies": []string{"USD", "ZZZ", "USD"}}), []string{"currencies[1]", "currencies[2]"}},
		{"address", with(ind, map[string]any{"address": map[string]any{"line1": "", "country": "USA"}}), []string{"address.country", "address.line1", "address.postalCode"}},
		{"consent", with(ind, map[string]any{"endUserTermsConsent": map[string]any{"acceptedAt": "yesterday", "ipAddress": "999.1.1.1", "acceptanceMethod": "NOD"}}),
			[]string{"endUserTermsConsent.acceptanceMethod", "endUserTermsConsent.acceptedAt", "endUserTermsConsent.ipAddress", "endUserTermsConsent.termsVersion"}},
		{"idType for a business only", with(ind, map[string]any{"idType": "EIN"}), []string{"idType"}},
		{"identifier format", with(ind, map[string]any{"identifier": "123456789"}), []string{"identifier"}},
		{"ITIN starts with 9", with(ind, map[string]any{"idType": "ITIN"}), []string{"identifier"}},
		{"identifier without idType", with(ind, map[string]any{"idType": nil}), []string{"idType"}},
		{"countryOfIssuance", with(ind, map[string]any{"countryOfIssuance": "MX"}), []string{"countryOfIssuance"}},
		{"edd enums", with(ind, map[string]any{"sourceOfWealthCategories": []string{"LOTTERY"}, "pepStatus": "MAYBE", "annualIncomeRange": "LOTS"}),
			[]string{"annualIncomeRange", "pepStatus", "sourceOfWealthCategories[0]"}},
		{"other description missing", with(ind, map[string]any{"sourceOfFundsOtherDescription": nil}), []string{"sourceOfFundsOtherDescription"}},
		{"other description without OTHER", with(ind, map[string]any{"sourceOfFundsCategories": []string{"SALARY"}}), []string{"sourceOfFundsOtherDescription"}},
		{"businessInfo on an individual", with(ind, map[string]any{"businessInfo": map[string]any{"legalName": "X"}}), []string{"businessInfo"}},
		{"kycStatus is read-only", with(ind, map[string]any{"kycStatus": "APPROVED"}), []string{"kycStatus"}},
		{"many at once", with(ind, map[string]any{"birthDate": "x", "nationality": "x", "phoneNumber": "x", "email": "x", "fullName": strings.Repeat("n", 256)}),
			[]string{"birthDate", "email", "fullName", "nationality", "phoneNumber"}},
		{"business without businessInfo", with(biz, map[string]any{"businessInfo": nil}), []string{"businessInfo"}},
		{"business required fields", with(biz, map[string]any{"businessInfo": bizInfo(map[string]any{"legalName": nil, "country": nil, "taxId": nil, "incorporatedOn": nil})}),
			[]string{"businessInfo.country", "businessInfo.incorporatedOn", "businessInfo.legalName", "businessInfo.taxId"}},
		{"business bad fields", with(biz, map[string]any{"businessInfo": bizInfo(map[string]any{"incorporatedOn": "2018-13-01", "entityType": "GUILD",
			"naicsCode": "5415111", "countriesOfOperation": []string{"US", "ZZ"}, "businessType": "PIRACY", "sourceOfFundsCategories": []string{"THEFT"},
			"purposeOfAccount": "P2P_TRANSFERS", "primaryContactLastName": strings.Repeat("s", 251)})}),
			[]string{"businessInfo.businessType", "businessInfo.countriesOfOperation[1]", "businessInfo.entityType", "businessInfo.incorporatedOn",
				"businessInfo.naicsCode", "businessInfo.primaryContactLastName", "businessInfo.purposeOfAccountOtherDescription", "businessInfo.sourceOfFundsCategories[0]"}},
		{"individual fields on a business", with(biz, map[string]any{"birthDate": "1990-01-01", "fullName": "Acme", "identifier": "123-45-6789", "pepStatus": "NONE"}),
			[]string{"birthDate", "fullName", "identifier", "pepStatus"}},
		{"kybStatus is read-only", with(biz, map[string]any{"kybStatus": "APPROVED"}), []string{"kybStatus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("POST", "/customers", tt.body, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var got []string
			for f := range fieldNames(t, r) {
				got = append(got, f)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.fields) {
				t.Fatalf("fields %v, want %v: %s", got, tt.fields, r.body)
			}
		})
	}
	var list wire.List[wire.Customer]
	e.do("GET", "/customers", nil, nil).decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused requests stored customers: %+v", list.Data)
	}

	// The same checks on update, and the fields an update cannot carry.
	r := e.do("POST", "/customers", ind, nil)
	e.mustStatus(r, http.StatusCreated)
	var c wire.Customer
	r.decode(t, &c)
	updates := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"region is set on creation", map[string]any{"customerType": "INDIVIDUAL", "region": "GB"}, []string{"region"}},
		{"several", map[string]any{"customerType": "INDIVIDUAL", "birthDate": "2999-01-01", "phoneNumber": "", "currencies": []string{"ZZZ"}},
			[]string{"birthDate", "currencies[0]", "phoneNumber"}},
		{"other description without OTHER (stored categories)", map[string]any{"customerType": "INDIVIDUAL", "sourceOfWealthOtherDescription": "x"},
			[]string{"sourceOfWealthOtherDescription"}},
		{"business fields on an individual", map[string]any{"customerType": "INDIVIDUAL", "businessInfo": map[string]any{"legalName": "X"}}, []string{"businessInfo"}},
		{"nothing to change", map[string]any{"customerType": "INDIVIDUAL"}, []string{"email"}},
	}
	for _, tt := range updates {
		t.Run("update "+tt.name, func(t *testing.T) {
			r := e.do("PATCH", "/customers/"+c.ID, tt.body, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var got []string
			for f := range fieldNames(t, r) {
				got = append(got, f)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.fields) {
				t.Fatalf("fields %v, want %v: %s", got, tt.fields, r.body)
			}
		})
	}
	r = e.do("GET", "/customers/"+c.ID, nil, nil)
	wantFields(t, "after refused updates", r.body, ind)
}

// TestSandboxKYC: in sandbox mode the last three characters of fullName
// (registrationNumber for businesses) choose the status, announced by its
// CUSTOMER.* event; in production there is no status and no event.
func TestSandboxKYC(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	cases := []struct {
		body        map[string]any
		field, want string
		event       string
	}{
		{map[string]any{"customerType": "INDIVIDUAL", "fullName": "Ana 001"}, "kycStatus", "PENDING", "CUSTOMER.KYC_PENDING"},
		{map[string]any{"customerType": "INDIVIDUAL", "fullName": "Ana 002"}, "kycStatus", "REJECTED", "CUSTOMER.KYC_REJECTED"},
		{map[string]any{"customerType": "INDIVIDUAL", "fullName": "Ana 003"}, "kycStatus", "UNVERIFIED", ""},
		{map[string]any{"customerType": "INDIVIDUAL", "fullName": "Ana"}, "kycStatus", "APPROVED", "CUSTOMER.KYC_APPROVED"},
		{map[string]any{"customerType": "INDIVIDUAL"}, "kycStatus", "APPROVED", "CUSTOMER.KYC_APPROVED"},
	}
	for _, suffix := range []struct{ reg, want, event string }{
		{"5523001", "PENDING", "CUSTOMER.KYB_PENDING"}, {"5523002", "REJECTED", "CUSTOMER.KYB_REJECTED"},
		{"5523003", "UNVERIFIED", ""}, {"5523041", "APPROVED", "CUSTOMER.KYB_APPROVED"},
	} {
		b := businessBody("kyb-" + suffix.reg)
		b["businessInfo"].(map[string]any)["registrationNumber"] = suffix.reg
		cases = append(cases, struct {
			body        map[string]any
			field, want string
			event       string
		}{b, "kybStatus", suffix.want, suffix.event})
	}
	for _, tc := range cases {
		r := e.do("POST", "/customers", tc.body, nil)
		e.mustStatus(r, http.StatusCreated)
		var m map[string]any
		r.decode(t, &m)
		if m[tc.field] != tc.want {
			t.Fatalf("%v: %s", tc.body, r.body)
		}
		other := map[string]string{"kycStatus": "kybStatus", "kybStatus": "kycStatus"}[tc.field]
		if _, ok := m[other]; ok {
			t.Fatalf("%s on the wrong type: %s", other, r.body)
		}
		e.deliver()
		got := rc.of(m["id"].(string))
		switch {
		case tc.event == "" && len(got) != 0, tc.event != "" && !slices.Contains(got, tc.event+"#1"):
			t.Fatalf("%v: events %v, want %q", tc.body, got, tc.event)
		}
	}
	// The event's data is the customer as the API answers it.
	for _, ev := range rc.events() {
		if strings.HasPrefix(ev.Type, "CUSTOMER.") && !strings.Contains(string(ev.Data), `"isDeleted":false`) {
			t.Fatalf("event data %s", ev.Data)
		}
	}
}

func TestDeleteCustomer(t *testing.T) { onBothStores(t, testDeleteCustomer) }

func testDeleteCustomer(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)

	// Refused while an account holds money.
	rich := e.newPayer("rich@example.com", 500)
	r := e.do("DELETE", "/customers/"+rich.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusConflict)
	eb := r.errorBody(t)
	funded, _ := eb.Details["fundedAccounts"].([]any)
	if eb.Code != "CONFLICT" || len(funded) != 1 || funded[0].(map[string]any)["accountId"] != rich.account.ID ||
		funded[0].(map[string]any)["available"] != float64(500) {
		t.Fatalf("refusal %s", r.body)
	}
	// Also while the money is held by a payment in flight.
	dest := e.destination(rich, "12345")
	q := e.quote(quoteBody(rich, dest.ID, "SENDING", 500))
	r = e.do("POST", "/quotes/"+q.ID+"/execute", nil, map[string]string{wire.HeaderWalletSignature: wire.SandboxSignature})
	e.mustStatus(r, http.StatusOK)
	r = e.do("DELETE", "/customers/"+rich.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusConflict)
	if eb := r.errorBody(t); eb.Details["paymentsInFlight"] != float64(1) {
		t.Fatalf("refusal in flight %s", r.body)
	}
	r = e.do("GET", "/customers/"+rich.customer.ID, nil, nil)
	if !strings.Contains(string(r.body), `"isDeleted":false`) {
		t.Fatalf("a refused delete changed the customer: %s", r.body)
	}

	// An empty customer with a session and an external account.
	p := e.newPayer("gone@example.com", 0)
	ext := e.destination(p, "67890")
	q = e.quote(quoteBody(p, ext.ID, "SENDING", 100)) // pending: does not block
	e.deliver()
	r = e.do("DELETE", "/customers/"+p.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var gone wire.Customer
	r.decode(t, &gone)
	if !gone.IsDeleted || gone.ID != p.customer.ID {
		t.Fatalf("delete answered %s", r.body)
	}
	e.deliver()
	if got := rc.of(p.account.ID); !slices.Contains(got, "INTERNAL_ACCOUNT.STATUS_UPDATED#2") {
		t.Fatalf("account events %v", got)
	}
	if got := rc.of(ext.ID); len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "EXTERNAL_ACCOUNT.STATUS_UPDATED") {
		t.Fatalf("external account events %v", got)
	}
	var acct wire.InternalAccount
	r = e.do("GET", "/customers/internal-accounts?customerId="+p.customer.ID, nil, nil)
	var accts wire.List[wire.InternalAccount]
	r.decode(t, &accts)
	if acct = accts.Data[0]; acct.Status != "CLOSED" {
		t.Fatalf("account %+v", acct)
	}
	if a := e.getAccount(ext.ID); a.Status != "INACTIVE" {
		t.Fatalf("external account %+v", a)
	}

	// Answers after: GET still answers, lists leave it out unless asked,
	// PATCH and a second DELETE are 410.
	r = e.do("GET", "/customers/"+p.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	if !strings.Contains(string(r.body), `"isDeleted":true`) {
		t.Fatalf("GET after delete %s", r.body)
	}
	var list wire.List[wire.Customer]
	e.do("GET", "/customers?platformCustomerId="+p.customer.PlatformCustomerID, nil, nil).decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("a deleted customer is listed: %+v", list)
	}
	e.do("GET", "/customers?isIncludingDeleted=true&platformCustomerId="+p.customer.PlatformCustomerID, nil, nil).decode(t, &list)
	if len(list.Data) != 1 || !list.Data[0].IsDeleted {
		t.Fatalf("isIncludingDeleted: %+v", list)
	}
	if r := e.do("GET", "/customers?isIncludingDeleted=maybe", nil, nil); r.status != http.StatusBadRequest || !fieldNames(t, r)["isIncludingDeleted"] {
		t.Fatalf("bad isIncludingDeleted: %d %s", r.status, r.body)
	}
	for _, call := range []struct{ method, path string }{{"PATCH", "/customers/" + p.customer.ID}, {"DELETE", "/customers/" + p.customer.ID}} {
		r := e.do(call.method, call.path, map[string]any{"customerType": "INDIVIDUAL", "fullName": "Back"}, nil)
		if call.method == "DELETE" {
			r = e.do(call.method, call.path, nil, nil)
		}
		if r.status != http.StatusGone || r.errorBody(t).Code != "CUSTOMER_DELETED" {
			t.Fatalf("%s after delete: %d %s", call.method, r.status, r.body)
		}
	}

	// Nobody can sign in, fund, pay from it or give it a credential.
	if r := e.do("POST", "/auth/credentials/"+p.credential.ID+"/challenge", map[string]any{}, nil); r.status < 400 {
		t.Fatalf("challenge of a removed credential: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/auth/credentials?accountId="+p.account.ID, nil, nil); r.status == http.StatusOK && strings.Contains(string(r.body), "AuthMethod:") {
		t.Fatalf("credentials of a closed account: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/auth/credentials", map[string]any{"type": "EMAIL_OTP", "accountId": p.account.ID}, nil); r.status != http.StatusGone {
		t.Fatalf("new credential on a closed account: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/auth/sessions?accountId="+p.account.ID, nil, nil); r.status == http.StatusOK && strings.Contains(string(r.body), "Session:") {
		t.Fatalf("sessions survive: %s", r.body)
	}
	if r := e.do("POST", "/sandbox/internal-accounts/"+p.account.ID+"/fund", map[string]any{"amount": 100}, nil); r.status != http.StatusGone {
		t.Fatalf("funding a closed account: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/quotes", quoteBody(p, ext.ID, "SENDING", 100), nil); r.status != http.StatusBadRequest {
		t.Fatalf("quote from a closed account: %d %s", r.status, r.body)
	}
	// Nor get new external accounts or agents (before, both were made, and
	// the verifier then made the account ACTIVE).
	if r := e.do("POST", "/customers/external-accounts", usdBody(p.customer.ID, "000000777"), nil); r.status != http.StatusGone {
		t.Fatalf("external account for a deleted customer: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/agents", map[string]any{"customerId": p.customer.ID, "name": "late",
		"policy": map[string]any{"permissions": []string{"VIEW_TRANSACTIONS"}, "defaultExecutionMode": "AUTO",
			"spendingLimits": map[string]any{"currency": "USD", "perTransactionLimit": 100}}}, nil); r.status != http.StatusGone {
		t.Fatalf("agent for a deleted customer: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/quotes/"+q.ID+"/execute", nil, map[string]string{wire.HeaderWalletSignature: wire.SandboxSignature}); r.status < 400 {
		t.Fatalf("executing a quote made before the delete: %d %s", r.status, r.body)
	}

	// The e-mail and the platformCustomerId are free for a new customer.
	again := e.newWallet("gone@example.com")
	if again.customer.ID == p.customer.ID || again.customer.PlatformCustomerID != p.customer.PlatformCustomerID {
		t.Fatalf("new customer %+v", again.customer)
	}
	if r := e.do("DELETE", "/customers/Customer:0199a3c4-0000-7000-8000-000000000001", nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown customer: %d", r.status)
	}
}

// TestUpdateWithoutCustomerType: the reference's own command-line client
// sends PATCH /customers/{id} without customerType; the customer's own type
// is meant, its fields apply, a field of the other type is still named,
// and a changed type is still refused.
func TestUpdateWithoutCustomerType(t *testing.T) {
	e := newEnv(t)
	var ind, biz wire.Customer
	e.do("POST", "/customers", individualBody("ind-notype", "ind-notype@example.com"), nil).decode(t, &ind)
	e.do("POST", "/customers", businessBody("biz-notype"), nil).decode(t, &biz)

	var got map[string]any
	r := e.do("PATCH", "/customers/"+ind.ID, map[string]any{"fullName": "Jane Q. Smith", "nationality": "GB"}, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &got)
	if got["fullName"] != "Jane Q. Smith" || got["nationality"] != "GB" || got["customerType"] != "INDIVIDUAL" {
		t.Fatalf("individual after the update: %v", got)
	}
	r = e.do("PATCH", "/customers/"+biz.ID, map[string]any{"businessInfo": map[string]any{"doingBusinessAs": "Acme Two"}}, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &got)
	if info, _ := got["businessInfo"].(map[string]any); info["doingBusinessAs"] != "Acme Two" || info["legalName"] != "Acme Corporation" {
		t.Fatalf("business after the update: %v", got)
	}
	for _, tc := range []struct {
		name, id string
		body     map[string]any
		want     []string
	}{
		{"a business field on an individual", ind.ID, map[string]any{"businessInfo": map[string]any{"legalName": "X"}}, []string{"businessInfo"}},
		{"an individual field on a business", biz.ID, map[string]any{"birthDate": "1990-01-15"}, []string{"birthDate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("PATCH", "/customers/"+tc.id, tc.body, nil)
			e.mustStatus(r, http.StatusBadRequest)
			var got []string
			for f := range fieldNames(t, r) {
				got = append(got, f)
			}
			if slices.Sort(got); !slices.Equal(got, tc.want) {
				t.Fatalf("named %v, want %v", got, tc.want)
			}
		})
	}
	r = e.do("PATCH", "/customers/"+ind.ID, map[string]any{"customerType": "BUSINESS"}, nil)
	if e.mustStatus(r, http.StatusBadRequest); !fieldNames(t, r)["customerType"] {
		t.Fatal("a change of type is not named")
	}
	r = e.do("PATCH", "/customers/Customer:019aa5d2-7c10-7000-8000-00000000dead", map[string]any{"fullName": "X"}, nil)
	e.mustStatus(r, http.StatusNotFound)
}

// TestUmaAddressIsOneCustomers: incoming UMA payments find their customer
// by umaAddress, so no two live customers share one: a create or an update
// to another live customer's address is 409 CONFLICT naming it, and nothing
// is stored; a deleted customer's address is free again. Before, both were
// accepted and the newer customer could never be paid.
func TestUmaAddressIsOneCustomers(t *testing.T) { onBothStores(t, testUmaAddressIsOneCustomers) }

func testUmaAddressIsOneCustomers(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	var first, second wire.Customer
	var r response
	body := individualBody("uma-1", "uma-1@example.com")
	body["umaAddress"] = "$jane@uma.example"
	r = e.do("POST", "/customers", body, nil)
	e.mustStatus(r, http.StatusCreated)
	r.decode(t, &first)
	dup := individualBody("uma-2", "uma-2@example.com")
	dup["umaAddress"] = "$jane@uma.example"
	r = e.do("POST", "/customers", dup, nil)
	if r.status != http.StatusConflict || r.errorBody(t).Details["umaAddress"] != "$jane@uma.example" {
		t.Fatalf("second customer with the address: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/customers?platformCustomerId=uma-2", nil, nil); strings.Contains(string(r.body), "uma-2") {
		t.Fatalf("the refused customer was stored: %s", r.body)
	}
	dup["umaAddress"] = "$june@uma.example"
	r = e.do("POST", "/customers", dup, nil)
	e.mustStatus(r, http.StatusCreated)
	r.decode(t, &second)
	r = e.do("PATCH", "/customers/"+second.ID, map[string]any{"umaAddress": "$jane@uma.example", "fullName": "June Smith"}, nil)
	if r.status != http.StatusConflict || r.errorBody(t).Details["umaAddress"] != "$jane@uma.example" {
		t.Fatalf("update to another's address: %d %s", r.status, r.body)
	}
	var got wire.Customer
	r = e.do("GET", "/customers/"+second.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &got)
	if got.UmaAddress != "$june@uma.example" || got.FullName == "June Smith" {
		t.Fatalf("the refused update was stored: %+v", got)
	}
	// Its own address again is no conflict.
	e.mustStatus(e.do("PATCH", "/customers/"+second.ID, map[string]any{"umaAddress": "$june@uma.example"}, nil), http.StatusOK)
	e.mustStatus(e.do("DELETE", "/customers/"+first.ID, nil, nil), http.StatusOK)
	e.mustStatus(e.do("PATCH", "/customers/"+second.ID, map[string]any{"umaAddress": "$jane@uma.example"}, nil), http.StatusOK)

	// Addresses the service makes up differ even for customers created in
	// one millisecond (the clock does not move here).
	seen := map[string]bool{}
	for i := range 20 {
		var c wire.Customer
		r = e.do("POST", "/customers", map[string]any{"customerType": "INDIVIDUAL", "platformCustomerId": "gen-" + strconv.Itoa(i)}, nil)
		e.mustStatus(r, http.StatusCreated)
		r.decode(t, &c)
		if seen[c.UmaAddress] {
			t.Fatalf("made-up address %s twice", c.UmaAddress)
		}
		seen[c.UmaAddress] = true
	}
}

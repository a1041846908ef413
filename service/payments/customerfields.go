package payments

import (
	"encoding/json"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"paywallet/shared/accountrules"
	"paywallet/shared/wire"
)

// The checks of the reference's customer fields (grid-openapi.yaml:
// Customer, IndividualCustomerFields, CustomerEdd, BusinessCustomerFields,
// BusinessInfo, Address, EndUserTermsConsentRequest). Every bad field is
// recorded, by its JSON path, so one answer names them all.

// customerProfile is what store.Customer.Profile holds: the customer's
// fields beside those with their own columns, as JSON.
type customerProfile struct {
	wire.CustomerCommon
	wire.IndividualFields
	BusinessInfo *wire.BusinessInfo `json:"businessInfo,omitempty"`
}

func decodeProfile(b []byte) customerProfile {
	var p customerProfile
	if len(b) > 0 {
		_ = json.Unmarshal(b, &p) // written by encodeProfile only
	}
	return p
}

func encodeProfile(p *customerProfile) ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil || string(b) == "{}" {
		return nil, err
	}
	return b, nil
}

// Enums of the reference.
var (
	identificationTypes     = []string{"SSN", "ITIN", "EIN", "NON_US_TAX_ID"}
	individualIDTypes       = []string{"SSN", "ITIN"}
	individualFundsSources  = []string{"SALARY", "SELF_EMPLOYMENT_INCOME", "INVESTMENT_INCOME", "PENSION", "RENTAL_INCOME", "GIFT", "INHERITANCE", "LOAN", "SAVINGS", "SALE_OF_ASSETS", "OTHER"}
	wealthSources           = []string{"SALARY", "BUSINESS_INCOME", "INVESTMENTS", "INHERITANCE", "PROPERTY_SALE", "GIFT", "RETIREMENT", "SAVINGS", "OTHER"}
	accountPurposes         = []string{"CONTRACTOR_PAYOUTS", "CREATOR_PAYOUTS", "EMPLOYEE_PAYOUTS", "MARKETPLACE_SELLER_PAYOUTS", "SUPPLIER_PAYMENTS", "CROSS_BORDER_B2B", "AR_AUTOMATION", "AP_AUTOMATION", "EMBEDDED_PAYMENTS", "PLATFORM_FEE_COLLECTION", "P2P_TRANSFERS", "CHARITABLE_DONATIONS", "OTHER"}
	monthlyCounts           = []string{"COUNT_UNDER_10", "COUNT_10_TO_100", "COUNT_100_TO_500", "COUNT_500_TO_1000", "COUNT_OVER_1000"}
	monthlyVolumes          = []string{"VOLUME_UNDER_10K", "VOLUME_10K_TO_100K", "VOLUME_100K_TO_1M", "VOLUME_1M_TO_10M", "VOLUME_OVER_10M"}
	incomeRanges            = []string{"UNDER_50K", "RANGE_50K_100K", "RANGE_100K_250K", "RANGE_250K_1M", "OVER_1M"}
	netWorthRanges          = []string{"UNDER_100K", "RANGE_100K_500K", "RANGE_500K_1M", "RANGE_1M_5M", "RANGE_5M_25M", "OVER_25M"}
	pepStatuses             = []string{"NONE", "DOMESTIC", "FOREIGN", "HIO", "FAMILY_OR_ASSOCIATE"}
	entityTypes             = []string{"SOLE_PROPRIETORSHIP", "PARTNERSHIP", "LLC", "CORPORATION", "S_CORPORATION", "NON_PROFIT", "PUBLICLY_LISTED_COMPANY", "TRUST", "PRIVATE_FOUNDATION", "CHARITY", "OTHER"}
	businessTypes           = []string{"AGRICULTURE_FORESTRY_FISHING_AND_HUNTING", "MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION", "UTILITIES", "CONSTRUCTION", "MANUFACTURING", "WHOLESALE_TRADE", "RETAIL_TRADE", "TRANSPORTATION_AND_WAREHOUSING", "INFORMATION", "FINANCE_AND_INSURANCE", "REAL_ESTATE_AND_RENTAL_AND_LEASING", "PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES", "MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES", "ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES", "EDUCATIONAL_SERVICES", "HEALTH_CARE_AND_SOCIAL_ASSISTANCE", "ARTS_ENTERTAINMENT_AND_RECREATION", "ACCOMMODATION_AND_FOOD_SERVICES", "OTHER_SERVICES", "PUBLIC_ADMINISTRATION"}
	businessFundsSources    = []string{"OPERATING_REVENUE", "INVESTMENT_INCOME", "LOANS", "VENTURE_CAPITAL", "PERSONAL_SAVINGS", "DONATIONS", "OTHER"}
	termsAcceptanceMethods  = []string{"CHECKBOX", "CLICK_TO_ACCEPT"}
	phonePattern            = `^\+[1-9]\d{1,14}$`
	phoneRE                 = regexp.MustCompile(phonePattern)
	naicsPattern            = `^\d{2,6}$`
	naicsRE                 = regexp.MustCompile(naicsPattern)
	identifierPattern       = `^\d{3}-\d{2}-\d{4}$`
	identifierRE            = regexp.MustCompile(identifierPattern)
	countryPattern          = `^[A-Z]{2}$`
	datePattern             = `^\d{4}-\d{2}-\d{2}$`
	oldestBirthDate         = 130 // years: an older birthDate is a typo
	termsAcceptedClockSkew  = 5 * time.Minute
	maxShortText, maxLong   = 255, 500
	maxIdentifierLikeLength = 64
)

// fieldChecker records bad fields in fe; now is the request's time.
type fieldChecker struct {
	fe  *fieldErrors
	now time.Time
	s   *Service
}

func (c fieldChecker) text(field, v string, max int) {
	if utf8.RuneCountInString(v) > max {
		c.fe.addConstraint(field, "at most "+strconv.Itoa(max)+" characters", wire.FieldConstraint{MaxLength: new(max)})
	}
}

func (c fieldChecker) required(field, v string, max int) {
	if strings.TrimSpace(v) == "" {
		c.fe.add(field, "required")
		return
	}
	c.text(field, v, max)
}

func (c fieldChecker) enum(field, v string, values []string) {
	if v != "" && !slices.Contains(values, v) {
		c.fe.addConstraint(field, "must be one of "+strings.Join(values, ", "), wire.FieldConstraint{Enum: values})
	}
}

func (c fieldChecker) enumList(field string, vs []string, values []string) {
	for i, v := range vs {
		f := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(values, v):
			c.fe.addConstraint(f, "must be one of "+strings.Join(values, ", "), wire.FieldConstraint{Enum: values})
		case slices.Contains(vs[:i], v):
			c.fe.add(f, "duplicate of an earlier item")
		}
	}
}

func (c fieldChecker) country(field, v string) {
	if v != "" && !accountrules.CountryCode(v) {
		c.fe.addConstraint(field, "must be an ISO 3166-1 alpha-2 country code such as US", wire.FieldConstraint{Pattern: countryPattern})
	}
}

func (c fieldChecker) countries(field string, vs []string) {
	for i, v := range vs {
		f := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case !accountrules.CountryCode(v):
			c.fe.addConstraint(f, "must be an ISO 3166-1 alpha-2 country code such as US", wire.FieldConstraint{Pattern: countryPattern})
		case slices.Contains(vs[:i], v):
			c.fe.add(f, "duplicate of an earlier item")
		}
	}
}

// date checks a YYYY-MM-DD date that exists and is not after today; the
// zero time when it is bad or empty.
func (c fieldChecker) date(field, v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil || len(v) != 10 {
		c.fe.addConstraint(field, "must be a date that exists, as YYYY-MM-DD", wire.FieldConstraint{Format: "date", Pattern: datePattern})
		return time.Time{}
	}
	if d.After(c.now) {
		c.fe.add(field, "must not be in the future")
		return time.Time{}
	}
	return d
}

// otherDescription checks a free-form "other" description: required when
// the categories (or the one value) include OTHER, refused otherwise.
func (c fieldChecker) otherDescription(field, v string, withOther bool) {
	switch {
	case withOther && strings.TrimSpace(v) == "":
		c.fe.add(field, "required when OTHER is selected")
	case !withOther && v != "":
		c.fe.add(field, "only allowed when OTHER is selected")
	default:
		c.text(field, v, maxLong)
	}
}

// common checks the fields every customer type has.
func (c fieldChecker) common(p *wire.CustomerCommon, creating bool) {
	c.country("region", p.Region)
	for i, cur := range p.Currencies {
		f := "currencies[" + strconv.Itoa(i) + "]"
		if _, ok := c.s.rates.Currency(cur); !ok {
			c.fe.add(f, "unknown currency; GET /exchange-rates lists those this service handles")
		} else if slices.Contains(p.Currencies[:i], cur) {
			c.fe.add(f, "duplicate of an earlier item")
		}
	}
	if p.PhoneNumber != "" && !phoneRE.MatchString(p.PhoneNumber) {
		c.fe.addConstraint("phoneNumber", "must be an E.164 number such as +14155551234", wire.FieldConstraint{Pattern: phonePattern})
	}
	if t := p.EndUserTermsConsent; t != nil {
		if t.AcceptedAt == "" {
			c.fe.add("endUserTermsConsent.acceptedAt", "required")
		} else if at, err := time.Parse(time.RFC3339, t.AcceptedAt); err != nil {
			c.fe.addConstraint("endUserTermsConsent.acceptedAt", "must be an RFC 3339 date-time", wire.FieldConstraint{Format: "date-time"})
		} else if at.After(c.now.Add(termsAcceptedClockSkew)) {
			c.fe.add("endUserTermsConsent.acceptedAt", "must not be in the future")
		}
		if t.IPAddress == "" {
			c.fe.add("endUserTermsConsent.ipAddress", "required")
		} else if _, err := netip.ParseAddr(t.IPAddress); err != nil || len(t.IPAddress) > 45 {
			c.fe.addConstraint("endUserTermsConsent.ipAddress", "must be an IPv4 or IPv6 address", wire.FieldConstraint{MaxLength: new(45)})
		}
		c.required("endUserTermsConsent.termsVersion", t.TermsVersion, maxIdentifierLikeLength)
		if strings.TrimSpace(t.TermsVersion) != "" && utf8.RuneCountInString(t.TermsVersion) <= maxIdentifierLikeLength && !c.s.knownTermsVersion(t.TermsVersion) {
			c.fe.add("endUserTermsConsent.termsVersion", msgUnknownTermsVersion)
		}
		if t.AcceptanceMethod == "" {
			c.fe.add("endUserTermsConsent.acceptanceMethod", "required")
		}
		c.enum("endUserTermsConsent.acceptanceMethod", t.AcceptanceMethod, termsAcceptanceMethods)
	}
	if a := p.Address; a != nil {
		c.required("address.line1", a.Line1, maxShortText)
		c.text("address.line2", a.Line2, maxShortText)
		c.text("address.city", a.City, maxShortText)
		c.text("address.state", a.State, maxShortText)
		c.required("address.postalCode", a.PostalCode, 32)
		if a.Country == "" {
			c.fe.add("address.country", "required")
		}
		c.country("address.country", a.Country)
	}
}

// individual checks the fields of an INDIVIDUAL customer, one by one.
func (c fieldChecker) individual(f *wire.IndividualFields) {
	if d := c.date("birthDate", f.BirthDate); !d.IsZero() && d.Before(c.now.AddDate(-oldestBirthDate, 0, 0)) {
		c.fe.add("birthDate", "must be within the last "+strconv.Itoa(oldestBirthDate)+" years")
	}
	c.country("nationality", f.Nationality)
	c.enum("idType", f.IDType, identificationTypes)
	if slices.Contains(identificationTypes, f.IDType) && !slices.Contains(individualIDTypes, f.IDType) {
		c.fe.addConstraint("idType", "only SSN and ITIN are accepted for an individual", wire.FieldConstraint{Enum: individualIDTypes})
	}
	c.country("countryOfIssuance", f.CountryOfIssuance)
	if accountrules.CountryCode(f.CountryOfIssuance) && f.CountryOfIssuance != "US" {
		c.fe.add("countryOfIssuance", "must be US: SSN and ITIN are issued by the United States")
	}
	c.enumList("sourceOfFundsCategories", f.SourceOfFundsCategories, individualFundsSources)
	c.enumList("sourceOfWealthCategories", f.SourceOfWealthCategories, wealthSources)
	c.enum("purposeOfAccount", f.PurposeOfAccount, accountPurposes)
	c.enum("expectedMonthlyTransactionCount", f.ExpectedMonthlyTransactionCount, monthlyCounts)
	c.enum("expectedMonthlyTransactionVolume", f.ExpectedMonthlyTransactionVolume, monthlyVolumes)
	c.enum("annualIncomeRange", f.AnnualIncomeRange, incomeRanges)
	c.enum("netWorthRange", f.NetWorthRange, netWorthRanges)
	c.enum("pepStatus", f.PepStatus, pepStatuses)
}

// individualCross checks the rules between an individual's fields, on the
// fields as they will be stored (after an update's merge).
func (c fieldChecker) individualCross(f *wire.IndividualFields, identifier string) {
	c.otherDescription("sourceOfFundsOtherDescription", f.SourceOfFundsOtherDescription, slices.Contains(f.SourceOfFundsCategories, "OTHER"))
	c.otherDescription("sourceOfWealthOtherDescription", f.SourceOfWealthOtherDescription, slices.Contains(f.SourceOfWealthCategories, "OTHER"))
	c.otherDescription("purposeOfAccountOtherDescription", f.PurposeOfAccountOtherDescription, f.PurposeOfAccount == "OTHER")
	if identifier == "" {
		return
	}
	switch {
	case f.IDType == "":
		c.fe.add("idType", "required with identifier (SSN or ITIN)")
	case !identifierRE.MatchString(identifier):
		c.fe.addConstraint("identifier", "must be formatted ###-##-####", wire.FieldConstraint{Pattern: identifierPattern})
	case f.IDType == "ITIN" && identifier[0] != '9':
		c.fe.add("identifier", "an ITIN starts with 9")
	case f.IDType == "SSN" && (identifier[0] == '9' || strings.HasPrefix(identifier, "000") || strings.HasPrefix(identifier, "666")):
		c.fe.add("identifier", "is not a valid SSN")
	}
}

// business checks a BUSINESS customer's businessInfo; creating requires
// legalName, country, taxId and incorporatedOn.
func (c fieldChecker) business(b *wire.BusinessInfo, creating bool) {
	if creating {
		c.required("businessInfo.legalName", b.LegalName, maxShortText)
		c.required("businessInfo.taxId", b.TaxID, maxIdentifierLikeLength)
		if b.Country == "" {
			c.fe.add("businessInfo.country", "required")
		}
		if b.IncorporatedOn == "" {
			c.fe.add("businessInfo.incorporatedOn", "required")
		}
	} else {
		c.text("businessInfo.legalName", b.LegalName, maxShortText)
		c.text("businessInfo.taxId", b.TaxID, maxIdentifierLikeLength)
	}
	c.text("businessInfo.doingBusinessAs", b.DoingBusinessAs, maxShortText)
	c.country("businessInfo.country", b.Country)
	c.text("businessInfo.registrationNumber", b.RegistrationNumber, maxIdentifierLikeLength)
	c.date("businessInfo.incorporatedOn", b.IncorporatedOn)
	c.enum("businessInfo.entityType", b.EntityType, entityTypes)
	c.countries("businessInfo.countriesOfOperation", b.CountriesOfOperation)
	c.enum("businessInfo.businessType", b.BusinessType, businessTypes)
	c.enum("businessInfo.purposeOfAccount", b.PurposeOfAccount, accountPurposes)
	c.text("businessInfo.sourceOfFunds", b.SourceOfFunds, maxLong)
	c.enum("businessInfo.expectedMonthlyTransactionCount", b.ExpectedMonthlyTransactionCount, monthlyCounts)
	c.enum("businessInfo.expectedMonthlyTransactionVolume", b.ExpectedMonthlyTransactionVolume, monthlyVolumes)
	c.countries("businessInfo.expectedRecipientJurisdictions", b.ExpectedRecipientJurisdictions)
	if b.NaicsCode != "" && !naicsRE.MatchString(b.NaicsCode) {
		c.fe.addConstraint("businessInfo.naicsCode", "must be 2 to 6 digits", wire.FieldConstraint{Pattern: naicsPattern})
	}
	c.enumList("businessInfo.sourceOfFundsCategories", b.SourceOfFundsCategories, businessFundsSources)
	c.countries("businessInfo.expectedCounterpartyCountries", b.ExpectedCounterpartyCountries)
	c.text("businessInfo.primaryContactFirstName", b.PrimaryContactFirstName, 250)
	c.text("businessInfo.primaryContactLastName", b.PrimaryContactLastName, 250)
}

// businessCross checks the rules between the business fields as stored.
func (c fieldChecker) businessCross(b *wire.BusinessInfo) {
	c.otherDescription("businessInfo.sourceOfFundsOtherDescription", b.SourceOfFundsOtherDescription, slices.Contains(b.SourceOfFundsCategories, "OTHER"))
	c.otherDescription("businessInfo.purposeOfAccountOtherDescription", b.PurposeOfAccountOtherDescription, b.PurposeOfAccount == "OTHER")
}

// setMembers are the JSON members v carries (its non-empty fields), in
// order of name.
func setMembers(v any) []string {
	b, _ := json.Marshal(v)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// otherType refuses the fields of the other customer type that a request
// carries: individual fields (identifier and fullName included) on a
// BUSINESS customer, businessInfo and kybStatus on an INDIVIDUAL one.
func (c fieldChecker) otherType(typ string, ind *wire.IndividualFields, identifier, fullName string, business *wire.BusinessInfo) {
	switch typ {
	case "BUSINESS":
		names := setMembers(ind)
		if identifier != "" {
			names = append(names, "identifier")
		}
		if fullName != "" {
			names = append(names, "fullName")
		}
		for _, n := range names {
			c.fe.add(n, "only INDIVIDUAL customers have this field (a business's name is businessInfo.legalName)")
		}
	case "INDIVIDUAL":
		if business != nil {
			c.fe.add("businessInfo", "only BUSINESS customers have this field")
		}
	}
}

// readOnlyStatuses refuses kycStatus and kybStatus in a request: the
// service sets them (sandbox) or claims none (production).
func (c fieldChecker) readOnlyStatuses(kyc, kyb string) {
	if kyc != "" {
		c.fe.add("kycStatus", "is read-only: the service sets it")
	}
	if kyb != "" {
		c.fe.add("kybStatus", "is read-only: the service sets it")
	}
}

// mergeBusiness applies the members an update names to the stored
// business fields.
func mergeBusiness(dst *wire.BusinessInfo, u *wire.BusinessInfo) {
	set := func(d *string, v string) {
		if v != "" {
			*d = v
		}
	}
	list := func(d *[]string, v []string) {
		if v != nil {
			*d = v
		}
	}
	set(&dst.LegalName, u.LegalName)
	set(&dst.DoingBusinessAs, u.DoingBusinessAs)
	set(&dst.Country, u.Country)
	set(&dst.RegistrationNumber, u.RegistrationNumber)
	set(&dst.IncorporatedOn, u.IncorporatedOn)
	set(&dst.EntityType, u.EntityType)
	set(&dst.TaxID, u.TaxID)
	list(&dst.CountriesOfOperation, u.CountriesOfOperation)
	set(&dst.BusinessType, u.BusinessType)
	set(&dst.PurposeOfAccount, u.PurposeOfAccount)
	set(&dst.SourceOfFunds, u.SourceOfFunds)
	set(&dst.ExpectedMonthlyTransactionCount, u.ExpectedMonthlyTransactionCount)
	set(&dst.ExpectedMonthlyTransactionVolume, u.ExpectedMonthlyTransactionVolume)
	list(&dst.ExpectedRecipientJurisdictions, u.ExpectedRecipientJurisdictions)
	set(&dst.NaicsCode, u.NaicsCode)
	list(&dst.SourceOfFundsCategories, u.SourceOfFundsCategories)
	set(&dst.SourceOfFundsOtherDescription, u.SourceOfFundsOtherDescription)
	set(&dst.PurposeOfAccountOtherDescription, u.PurposeOfAccountOtherDescription)
	list(&dst.ExpectedCounterpartyCountries, u.ExpectedCounterpartyCountries)
	set(&dst.PrimaryContactFirstName, u.PrimaryContactFirstName)
	set(&dst.PrimaryContactLastName, u.PrimaryContactLastName)
}

// mergeIndividual applies the members an update names to the stored
// individual fields.
func mergeIndividual(dst *wire.IndividualFields, u *wire.IndividualFields) {
	set := func(d *string, v string) {
		if v != "" {
			*d = v
		}
	}
	list := func(d *[]string, v []string) {
		if v != nil {
			*d = v
		}
	}
	set(&dst.BirthDate, u.BirthDate)
	set(&dst.Nationality, u.Nationality)
	set(&dst.IDType, u.IDType)
	set(&dst.CountryOfIssuance, u.CountryOfIssuance)
	list(&dst.SourceOfFundsCategories, u.SourceOfFundsCategories)
	set(&dst.SourceOfFundsOtherDescription, u.SourceOfFundsOtherDescription)
	list(&dst.SourceOfWealthCategories, u.SourceOfWealthCategories)
	set(&dst.SourceOfWealthOtherDescription, u.SourceOfWealthOtherDescription)
	set(&dst.PurposeOfAccount, u.PurposeOfAccount)
	set(&dst.PurposeOfAccountOtherDescription, u.PurposeOfAccountOtherDescription)
	set(&dst.ExpectedMonthlyTransactionCount, u.ExpectedMonthlyTransactionCount)
	set(&dst.ExpectedMonthlyTransactionVolume, u.ExpectedMonthlyTransactionVolume)
	set(&dst.AnnualIncomeRange, u.AnnualIncomeRange)
	set(&dst.NetWorthRange, u.NetWorthRange)
	set(&dst.PepStatus, u.PepStatus)
}

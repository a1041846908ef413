package wire

// The customer shapes of the reference (grid-openapi.yaml: Customer,
// IndividualCustomerFields with CustomerEdd, BusinessCustomerFields,
// BusinessInfo, Address, EndUserTermsConsent). Customer, the create and the
// update request embed them, so their members sit at the top level of the
// JSON object as in the reference's allOf compositions.

// CustomerCommon holds the fields every customer type has beside those of
// Customer itself. On update, region is refused (it is set on creation).
type CustomerCommon struct {
	Region              string                      `json:"region,omitempty"`
	Currencies          []string                    `json:"currencies,omitempty"`
	PhoneNumber         string                      `json:"phoneNumber,omitempty"`
	EndUserTermsConsent *EndUserTermsConsentRequest `json:"endUserTermsConsent,omitempty"`
	Address             *Address                    `json:"address,omitempty"`
}

// Address is a postal address; line1, postalCode and country are required.
type Address struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city,omitempty"`
	State      string `json:"state,omitempty"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// EndUserTermsConsentRequest is the customer's acceptance of the End User
// Terms (EndUserTermsConsent in answers, with the same members).
type EndUserTermsConsentRequest struct {
	AcceptedAt       string `json:"acceptedAt"`
	IPAddress        string `json:"ipAddress"`
	TermsVersion     string `json:"termsVersion"`
	AcceptanceMethod string `json:"acceptanceMethod"`
}

// IndividualFields are the fields only INDIVIDUAL customers have (beside
// fullName and kycStatus), enhanced due diligence included. The
// identification number (identifier) is write-only and so not here.
type IndividualFields struct {
	BirthDate         string `json:"birthDate,omitempty"`
	Nationality       string `json:"nationality,omitempty"`
	IDType            string `json:"idType,omitempty"`
	CountryOfIssuance string `json:"countryOfIssuance,omitempty"`
	CustomerEdd
}

// CustomerEdd is the reference's enhanced-due-diligence fields of an
// individual.
type CustomerEdd struct {
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	SourceOfWealthCategories         []string `json:"sourceOfWealthCategories,omitempty"`
	SourceOfWealthOtherDescription   string   `json:"sourceOfWealthOtherDescription,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	AnnualIncomeRange                string   `json:"annualIncomeRange,omitempty"`
	NetWorthRange                    string   `json:"netWorthRange,omitempty"`
	PepStatus                        string   `json:"pepStatus,omitempty"`
}

// BusinessInfo is a BUSINESS customer's business (BusinessInfo on create,
// where legalName, country, taxId and incorporatedOn are required;
// BusinessInfoUpdate on update, every member optional;
// BusinessInfoResponse in answers).
type BusinessInfo struct {
	LegalName                        string   `json:"legalName,omitempty"`
	DoingBusinessAs                  string   `json:"doingBusinessAs,omitempty"`
	Country                          string   `json:"country,omitempty"`
	RegistrationNumber               string   `json:"registrationNumber,omitempty"`
	IncorporatedOn                   string   `json:"incorporatedOn,omitempty"`
	EntityType                       string   `json:"entityType,omitempty"`
	TaxID                            string   `json:"taxId,omitempty"`
	CountriesOfOperation             []string `json:"countriesOfOperation,omitempty"`
	BusinessType                     string   `json:"businessType,omitempty"`
	PurposeOfAccount                 string   `json:"purposeOfAccount,omitempty"`
	SourceOfFunds                    string   `json:"sourceOfFunds,omitempty"`
	ExpectedMonthlyTransactionCount  string   `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume string   `json:"expectedMonthlyTransactionVolume,omitempty"`
	ExpectedRecipientJurisdictions   []string `json:"expectedRecipientJurisdictions,omitempty"`
	NaicsCode                        string   `json:"naicsCode,omitempty"`
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    string   `json:"sourceOfFundsOtherDescription,omitempty"`
	PurposeOfAccountOtherDescription string   `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedCounterpartyCountries    []string `json:"expectedCounterpartyCountries,omitempty"`
	PrimaryContactFirstName          string   `json:"primaryContactFirstName,omitempty"`
	PrimaryContactLastName           string   `json:"primaryContactLastName,omitempty"`
}

package accountrules

// The page's add-recipient form is drawn from [Form]: the wasm module hands
// it over as a plain JavaScript object, so that an account type is written
// once, in the variants table, and the page keeps only the words (its
// message catalogue) and the drawing.

// Parts of the form besides the account's own fields, in the form's order.
// Their paths are relative to accountInfo.beneficiary (currency: the body).
var (
	currencyField = req("currency", ruleCurrency, "recipients.form.field.currency",
		inputs(hints{autocapitalize: "characters", maxLength: 3}))
	holderField = req("beneficiaryType", ruleBeneficiaryType, "recipients.form.field.holderType", listed)

	individualFields = []field{
		req("fullName", ruleFullName, "recipients.form.field.fullName", inputs(hints{autocomplete: "name"})),
		opt("birthDate", ruleBirthDate, "recipients.form.field.birthDate", inputs(hints{typ: "date", autocomplete: "bday"})),
		opt("nationality", ruleCountry, "recipients.form.field.nationality", countries),
	}
	// documentFields are offered to individuals of a variant with documents.
	documentFields = []field{
		opt("documentType", ruleDocumentType, "recipients.form.field.documentType", choose("recipients.form.choose.noDocument")),
		opt("documentNumber", ruleDocumentNumber, "recipients.form.field.documentNumber"),
	}
	businessFields = []field{
		req("businessInfo.legalName", ruleLegalName, "recipients.form.field.legalName", inputs(hints{autocomplete: "organization"})),
		opt("businessInfo.registrationNumber", ruleRegistration, "recipients.form.field.registrationNumber"),
		opt("businessInfo.taxId", ruleBusinessTaxID, "recipients.form.field.taxId"),
	}
	// addressFields are drawn as optional: the form marks them required when
	// the module's requiredBeneficiaryFields says so.
	addressFields = []field{
		opt("address.line1", ruleLine, "recipients.form.field.street", inputs(hints{autocomplete: "address-line1"})),
		opt("address.city", ruleLine, "recipients.form.field.city", inputs(hints{autocomplete: "address-level2"})),
		opt("address.postalCode", rulePostalCode, "recipients.form.field.postalCode", inputs(hints{autocomplete: "postal-code"})),
		opt("address.country", ruleCountry, "recipients.form.field.country", inputs(hints{autocomplete: "country"}), countries),
	}
)

var countries hint = func(f *field) { f.countries = true }

const beneficiaryPath = "accountInfo.beneficiary."

// Form describes the add-recipient form as a generic tree (map[string]any,
// []any, string, int, bool), which syscall/js turns into a JavaScript
// object as it is:
//
//	{types: [type…], currency: field, holderType: field,
//	 individual: [field…], document: [field…], business: [field…], address: [field…],
//	 countries: [code…]}
//	type:  {accountType, label, currency, defaultCurrency, country, wallet, documents,
//	        fields: [field…]  or  shapes: [{key, label, fields: [field…]}…]}
//	field: {path, label, labelParams?: {name: value}, required,
//	        inputMode?, autocomplete?, autocapitalize?, placeholder?, type?, maxLength?, spellcheck?: false,
//	        options?: [{value, label?, text?}…], regions?: [code…], countries?: true,
//	        banks?: {country, currency}}
//
// types are in the spec's order. A label is a message key of the page's
// catalogue; an option has a message key (label), a fixed text (text), or
// neither (the value is shown). currency "" means the form asks for it
// (defaultCurrency first); country is the one the type pays into, when it
// says; wallet types have no beneficiary; documents: individuals may give an
// identity document. A required account field is required by the validator;
// beneficiary fields are marked required by requiredBeneficiaryFields once
// drawn (those marked here are required whatever the type). A countries
// field offers every code of countries (the assigned ISO 3166-1 alpha-2
// codes the validator takes), named in the page's language. banks: the
// value is a bankName of GET /discoveries for that country ("" is any) and
// currency.
func Form() map[string]any {
	types := make([]any, len(variants))
	for i, v := range variants {
		t := map[string]any{
			"accountType": v.accountType, "label": TypeLabelKey(v.accountType),
			"currency": v.currency, "defaultCurrency": v.defaultCurrency, "country": v.country,
			"wallet": v.wallet, "documents": v.documents,
		}
		if len(v.shapes) == 0 {
			t["fields"] = formFields("accountInfo.", v.members)
		} else {
			shapes := make([]any, len(v.shapes))
			for j, s := range v.shapes {
				shapes[j] = map[string]any{"key": s.key, "label": s.label, "fields": formFields("accountInfo.", s.members)}
			}
			t["shapes"] = shapes
		}
		types[i] = t
	}
	return map[string]any{
		"types":      types,
		"currency":   formField("", currencyField),
		"holderType": formField(beneficiaryPath, holderField),
		"individual": formFields(beneficiaryPath, individualFields),
		"document":   formFields(beneficiaryPath, documentFields),
		"business":   formFields(beneficiaryPath, businessFields),
		"address":    formFields(beneficiaryPath, addressFields),
		"countries":  countryList(),
	}
}

// countryList is every assigned country code, which a country field offers.
func countryList() []any {
	out := make([]any, 0, len(countryCodes)/2)
	for i := 0; i+1 < len(countryCodes); i += 2 {
		out = append(out, countryCodes[i:i+2])
	}
	return out
}

func formFields(prefix string, fs []field) []any {
	out := make([]any, 0, len(fs))
	for _, f := range fs {
		if f.forbid == "" {
			out = append(out, formField(prefix, f))
		}
	}
	return out
}

func formField(prefix string, f field) map[string]any {
	m := map[string]any{"path": prefix + f.name, "label": f.label, "required": f.required}
	if len(f.params) > 0 {
		p := map[string]any{}
		for i := 0; i+1 < len(f.params); i += 2 {
			p[f.params[i].(string)] = f.params[i+1]
		}
		m["labelParams"] = p
	}
	set := func(name, value string) {
		if value != "" {
			m[name] = value
		}
	}
	set("inputMode", f.hints.inputMode)
	set("autocomplete", f.hints.autocomplete)
	set("autocapitalize", f.hints.autocapitalize)
	set("placeholder", f.hints.placeholder)
	set("type", f.hints.typ)
	if f.hints.maxLength > 0 {
		m["maxLength"] = f.hints.maxLength
	}
	if f.hints.noSpellcheck {
		m["spellcheck"] = false
	}
	if f.countries {
		m["countries"] = true
	}
	if f.list {
		var options []any
		if f.choose != "" {
			options = append(options, map[string]any{"value": "", "label": f.choose})
		}
		if f.regions != nil {
			regions := make([]any, len(f.regions))
			for i, c := range f.regions {
				regions[i] = c
			}
			m["regions"] = regions
		} else {
			for _, c := range ruleChoices(f.rule) {
				o := map[string]any{"value": c.value}
				set := func(name, value string) {
					if value != "" {
						o[name] = value
					}
				}
				set("label", c.key)
				set("text", c.text)
				options = append(options, o)
			}
		}
		m["options"] = options
	}
	if b := f.rule.banks; b != nil {
		m["banks"] = map[string]any{"country": b.country, "currency": b.currency}
	}
	return m
}

// ruleChoices is how the form offers a rule's enum: its choices, or its
// values as they are.
func ruleChoices(ru *rule) []choice {
	if ru.choices != nil {
		return ru.choices
	}
	out := make([]choice, len(ru.enum))
	for i, v := range ru.enum {
		out[i] = choice{value: v}
	}
	return out
}

// TypeLabelKey returns the message key of an account type's name for a
// person: "recipients.type." and the type in lowerCamel words
// (USD_ACCOUNT: recipients.type.usdAccount). It is a convention, so that
// the page names a recipient's type (JavaScript does the same) without the
// wasm module; each catalogue has a key for every type (TestTypeLabels).
func TypeLabelKey(accountType string) string {
	b := []byte("recipients.type.")
	upper := false
	for i := 0; i < len(accountType); i++ {
		c := accountType[i]
		switch {
		case c == '_':
			upper = true
			continue
		case upper && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case !upper && c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		upper = false
		b = append(b, c)
	}
	return string(b)
}

package accountrules

// CountryCode reports whether s is an officially assigned ISO 3166-1
// alpha-2 country code (upper case), for other packages' field checks.
func CountryCode(s string) bool { return countryAssigned(s) }

package accountrules

// countryCodes is every officially assigned ISO 3166-1 alpha-2 code (249,
// as of 2024; user-assigned codes such as XK are not included), two letters
// each, grouped by first letter.
const countryCodes = "" +
	"ADAEAFAGAIALAMAOAQARASATAUAWAXAZ" +
	"BABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZ" +
	"CACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZ" +
	"DEDJDKDMDODZ" +
	"ECEEEGEHERESET" +
	"FIFJFKFMFOFR" +
	"GAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGY" +
	"HKHMHNHRHTHU" +
	"IDIEILIMINIOIQIRISIT" +
	"JEJMJOJP" +
	"KEKGKHKIKMKNKPKRKWKYKZ" +
	"LALBLCLILKLRLSLTLULVLY" +
	"MAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZ" +
	"NANCNENFNGNINLNONPNRNUNZ" +
	"OM" +
	"PAPEPFPGPHPKPLPMPNPRPSPTPWPY" +
	"QA" +
	"RERORSRURW" +
	"SASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZ" +
	"TCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZ" +
	"UAUGUMUSUYUZ" +
	"VAVCVEVGVIVNVU" +
	"WFWS" +
	"YEYT" +
	"ZAZMZW"

// countryAssigned reports whether s is an assigned ISO 3166-1 alpha-2 code.
func countryAssigned(s string) bool {
	if len(s) != 2 {
		return false
	}
	for i := 0; i+1 < len(countryCodes); i += 2 {
		if countryCodes[i:i+2] == s {
			return true
		}
	}
	return false
}

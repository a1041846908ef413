package banks

// all is every discovery entry, sorted by Country, Currency, DisplayName
// (byte order). TestData checks the order, the shapes and the counts.
var all = []Bank{
	// Brazil
	{"BTG Pactual", "Banco BTG Pactual", "BR", "BRL"},
	{"Bradesco", "Banco Bradesco", "BR", "BRL"},
	{"Banco Inter", "Banco Inter", "BR", "BRL"},
	{"Santander Brasil", "Banco Santander Brasil", "BR", "BRL"},
	{"Banco do Brasil", "Banco do Brasil", "BR", "BRL"},
	{"C6 Bank", "C6 Bank", "BR", "BRL"},
	{"Caixa Economica Federal", "Caixa Economica Federal", "BR", "BRL"},
	{"Itau Unibanco", "Itau Unibanco", "BR", "BRL"},
	{"Mercado Pago", "Mercado Pago", "BR", "BRL"},
	{"Nubank", "Nubank", "BR", "BRL"},
	{"PagBank", "PagBank (PagSeguro)", "BR", "BRL"},

	// Colombia: banks, then the mobile-money providers used as bankName
	{"BBVA Colombia", "BBVA Colombia", "CO", "COP"},
	{"Banco AV Villas", "Banco AV Villas", "CO", "COP"},
	{"Banco Caja Social", "Banco Caja Social", "CO", "COP"},
	{"Davivienda", "Banco Davivienda", "CO", "COP"},
	{"Banco Popular", "Banco Popular", "CO", "COP"},
	{"Banco de Bogota", "Banco de Bogota", "CO", "COP"},
	{"Banco de Occidente", "Banco de Occidente", "CO", "COP"},
	{"Bancolombia", "Bancolombia", "CO", "COP"},
	{"Daviplata", "Daviplata (mobile money)", "CO", "COP"},
	{"Nequi", "Nequi (mobile money)", "CO", "COP"},
	{"Scotiabank Colpatria", "Scotiabank Colpatria", "CO", "COP"},

	// Germany
	{"Commerzbank", "Commerzbank", "DE", "EUR"},
	{"Deutsche Bank", "Deutsche Bank", "DE", "EUR"},
	{"DKB", "Deutsche Kreditbank (DKB)", "DE", "EUR"},
	{"ING Deutschland", "ING Deutschland", "DE", "EUR"},
	{"N26", "N26 Bank", "DE", "EUR"},
	{"HypoVereinsbank", "UniCredit Bank (HypoVereinsbank)", "DE", "EUR"},

	// Spain
	{"BBVA", "Banco Bilbao Vizcaya Argentaria (BBVA)", "ES", "EUR"},
	{"Banco Sabadell", "Banco Sabadell", "ES", "EUR"},
	{"Banco Santander", "Banco Santander", "ES", "EUR"},
	{"Bankinter", "Bankinter", "ES", "EUR"},
	{"CaixaBank", "CaixaBank", "ES", "EUR"},

	// France
	{"BNP Paribas", "BNP Paribas", "FR", "EUR"},
	{"Credit Agricole", "Credit Agricole", "FR", "EUR"},
	{"Credit Mutuel", "Credit Mutuel", "FR", "EUR"},
	{"LCL", "LCL (Le Credit Lyonnais)", "FR", "EUR"},
	{"La Banque Postale", "La Banque Postale", "FR", "EUR"},
	{"Societe Generale", "Societe Generale", "FR", "EUR"},

	// Italy
	{"BPER Banca", "BPER Banca", "IT", "EUR"},
	{"Monte dei Paschi di Siena", "Banca Monte dei Paschi di Siena", "IT", "EUR"},
	{"Banco BPM", "Banco BPM", "IT", "EUR"},
	{"Intesa Sanpaolo", "Intesa Sanpaolo", "IT", "EUR"},
	{"UniCredit", "UniCredit", "IT", "EUR"},

	// Mexico
	{"BBVA Mexico", "BBVA Mexico", "MX", "MXN"},
	{"BanCoppel", "BanCoppel", "MX", "MXN"},
	{"Banamex", "Banamex", "MX", "MXN"},
	{"Banco Azteca", "Banco Azteca", "MX", "MXN"},
	{"Inbursa", "Banco Inbursa", "MX", "MXN"},
	{"Banorte", "Banorte", "MX", "MXN"},
	{"Banregio", "Banregio", "MX", "MXN"},
	{"HSBC Mexico", "HSBC Mexico", "MX", "MXN"},
	{"Santander Mexico", "Santander Mexico", "MX", "MXN"},
	{"Scotiabank Mexico", "Scotiabank Mexico", "MX", "MXN"},

	// Nigeria
	{"Access Bank", "Access Bank", "NG", "NGN"},
	{"Ecobank Nigeria", "Ecobank Nigeria", "NG", "NGN"},
	{"Fidelity Bank", "Fidelity Bank", "NG", "NGN"},
	{"First Bank of Nigeria", "First Bank of Nigeria", "NG", "NGN"},
	{"First City Monument Bank", "First City Monument Bank (FCMB)", "NG", "NGN"},
	{"Guaranty Trust Bank", "Guaranty Trust Bank (GTBank)", "NG", "NGN"},
	{"Kuda Bank", "Kuda Microfinance Bank", "NG", "NGN"},
	{"Moniepoint", "Moniepoint Microfinance Bank", "NG", "NGN"},
	{"Polaris Bank", "Polaris Bank", "NG", "NGN"},
	{"Stanbic IBTC Bank", "Stanbic IBTC Bank", "NG", "NGN"},
	{"Sterling Bank", "Sterling Bank", "NG", "NGN"},
	{"Union Bank of Nigeria", "Union Bank of Nigeria", "NG", "NGN"},
	{"United Bank for Africa", "United Bank for Africa (UBA)", "NG", "NGN"},
	{"Wema Bank", "Wema Bank", "NG", "NGN"},
	{"Zenith Bank", "Zenith Bank", "NG", "NGN"},

	// Netherlands
	{"ABN AMRO", "ABN AMRO", "NL", "EUR"},
	{"ING Bank", "ING Bank", "NL", "EUR"},
	{"Rabobank", "Rabobank", "NL", "EUR"},
	{"Triodos Bank", "Triodos Bank", "NL", "EUR"},
	{"bunq", "bunq", "NL", "EUR"},

	// Philippines
	{"BDO Unibank", "BDO Unibank", "PH", "PHP"},
	{"BPI", "Bank of the Philippine Islands", "PH", "PHP"},
	{"China Bank", "China Banking Corporation", "PH", "PHP"},
	{"DBP", "Development Bank of the Philippines", "PH", "PHP"},
	{"EastWest Bank", "East West Banking Corporation", "PH", "PHP"},
	{"GCash", "GCash", "PH", "PHP"},
	{"Land Bank of the Philippines", "Land Bank of the Philippines", "PH", "PHP"},
	{"Maya", "Maya Bank", "PH", "PHP"},
	{"Metrobank", "Metropolitan Bank and Trust Company", "PH", "PHP"},
	{"PNB", "Philippine National Bank", "PH", "PHP"},
	{"PSBank", "Philippine Savings Bank", "PH", "PHP"},
	{"RCBC", "Rizal Commercial Banking Corporation", "PH", "PHP"},
	{"Security Bank", "Security Bank Corporation", "PH", "PHP"},
	{"UnionBank", "Union Bank of the Philippines", "PH", "PHP"},

	// El Salvador (USD)
	{"Banco Agricola", "Banco Agricola", "SV", "USD"},
	{"Banco Atlantida", "Banco Atlantida El Salvador", "SV", "USD"},
	{"Banco Cuscatlan", "Banco Cuscatlan", "SV", "USD"},
	{"Banco Davivienda Salvadoreno", "Banco Davivienda El Salvador", "SV", "USD"},
	{"Banco Hipotecario", "Banco Hipotecario de El Salvador", "SV", "USD"},
	{"Banco Industrial El Salvador", "Banco Industrial El Salvador", "SV", "USD"},
	{"Banco Promerica", "Banco Promerica El Salvador", "SV", "USD"},
	{"BAC Credomatic", "Banco de America Central (BAC)", "SV", "USD"},
	{"Tigo Money", "Tigo Money (mobile money)", "SV", "USD"},

	// United States
	{"Bank of America", "Bank of America", "US", "USD"},
	{"Capital One", "Capital One", "US", "USD"},
	{"Citibank", "Citibank", "US", "USD"},
	{"Chase Bank", "JPMorgan Chase Bank", "US", "USD"},
	{"PNC Bank", "PNC Bank", "US", "USD"},
	{"TD Bank", "TD Bank", "US", "USD"},
	{"Truist Bank", "Truist Bank", "US", "USD"},
	{"U.S. Bank", "U.S. Bank", "US", "USD"},
	{"Wells Fargo", "Wells Fargo", "US", "USD"},

	// South Africa
	{"ABSA Bank", "Absa Bank", "ZA", "ZAR"},
	{"African Bank", "African Bank", "ZA", "ZAR"},
	{"Bank Zero", "Bank Zero", "ZA", "ZAR"},
	{"Bidvest Bank", "Bidvest Bank", "ZA", "ZAR"},
	{"Capitec Bank", "Capitec Bank", "ZA", "ZAR"},
	{"Discovery Bank", "Discovery Bank", "ZA", "ZAR"},
	{"FNB", "First National Bank (FNB)", "ZA", "ZAR"},
	{"Investec Bank", "Investec Bank", "ZA", "ZAR"},
	{"Nedbank", "Nedbank", "ZA", "ZAR"},
	{"Sasfin Bank", "Sasfin Bank", "ZA", "ZAR"},
	{"Standard Bank", "Standard Bank of South Africa", "ZA", "ZAR"},
	{"TymeBank", "TymeBank", "ZA", "ZAR"},
}

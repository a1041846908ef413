// Deutsche Texte des Teils recipients (Schlüssel wie in ../en/recipients.js).
// In ../de.js zusammengeführt; Regeln oben in ../../js/i18n.js.
//
// {reason} ist der Satz des Dienstes oder des Browsers (oft Englisch), der
// auf den Satz der Seite folgt. {refresh}, {reveal}, {hide} und {export}
// sind die Beschriftungen dieser Schaltflächen, wie die Seite sie zeigt.

export default {
  // Die Liste der Empfänger (views/recipients.js).
  "recipients.list.error.load": "Deine Empfänger konnten nicht geladen werden. {reason} Wähle „{refresh}“, um es noch einmal zu versuchen.",

  // Ein Konto, für Menschen benannt: „Ada Lovelace, US-Bankkonto •••• 5678“.
  "recipients.account.kindAndNumber": "{kind} •••• {last4}",
  "recipients.account.holderAndKind": "{holder}, {account}",
  "recipients.account.kindUnknown": "Konto",

  // Kontoarten.
  "recipients.type.usdAccount": "US-Bankkonto",
  "recipients.type.mxnAccount": "Mexikanisches Bankkonto, CLABE",
  "recipients.type.brlAccount": "Brasilianisches Pix-Konto",
  "recipients.type.copAccount": "Kolumbianisches Konto",
  "recipients.type.slvAccount": "Konto in El Salvador",
  "recipients.type.eurAccount": "Euro-Bankkonto, IBAN",
  "recipients.type.phpAccount": "Philippinisches Bankkonto",
  "recipients.type.gbpAccount": "Britisches Bankkonto",
  "recipients.type.inrAccount": "Indisches UPI-Konto",
  "recipients.type.ngnAccount": "Nigerianisches Bankkonto",
  "recipients.type.zarAccount": "Südafrikanisches Bankkonto",
  "recipients.type.kesAccount": "Mobile Money in Kenia",
  "recipients.type.tzsAccount": "Mobile Money in Tansania",
  "recipients.type.zmwAccount": "Mobile Money in Sambia",
  "recipients.type.rwfAccount": "Mobile Money in Ruanda",
  "recipients.type.mwkAccount": "Mobile Money in Malawi",
  "recipients.type.ugxAccount": "Mobile Money in Uganda",
  "recipients.type.xofAccount": "Mobile Money in Westafrika",
  "recipients.type.cadAccount": "Kanadisches Bankkonto",
  "recipients.type.aedAccount": "Bankkonto in den VAE, IBAN",
  "recipients.type.sparkWallet": "Spark-Wallet",

  // Status eines Kontos (Plakette) und was man damit tun kann.
  "recipients.status.pending": "In Prüfung",
  "recipients.status.active": "Aktiv",
  "recipients.status.underReview": "Wird überprüft",
  "recipients.status.removed": "Entfernt",
  "recipients.status.unknown": "Unbekannt",
  "recipients.advice.pending": "Es wird gerade geprüft; du kannst Geld dorthin senden, sobald es als „Aktiv“ angezeigt wird.",
  "recipients.advice.active": "Du kannst jetzt Geld dorthin senden.",
  "recipients.advice.underReview": "Es wird überprüft; du kannst Geld dorthin senden, sobald es freigegeben ist.",
  "recipients.advice.removed": "Es wurde entfernt: Du kannst kein Geld mehr dorthin senden. Frühere Zahlungen bleiben erhalten.",

  // Die Ansicht eines Empfängers.
  "recipients.detail.loading": "Dieser Empfänger wird geladen …",
  "recipients.detail.error.load": "Dieser Empfänger konnte nicht geladen werden. {reason}",
  // {link} ist die Stelle des Links „recipients.detail.notFoundLink“.
  "recipients.detail.notFound": "Diesen Empfänger gibt es bei dir nicht. Vielleicht ist der Link veraltet oder falsch abgetippt; {link}.",
  "recipients.detail.notFoundLink": "hier siehst du alle deine Empfänger",
  "recipients.detail.holder": "Inhaber",
  "recipients.detail.holderNotGiven": "Nicht angegeben",
  "recipients.detail.type": "Art",
  "recipients.detail.bank": "Bank",
  "recipients.detail.number": "Nummer",
  "recipients.detail.endingIn": "Endet auf {last4}",
  "recipients.detail.currency": "Währung",
  "recipients.detail.country": "Land",
  "recipients.detail.status": "Status",
  "recipients.detail.added": "Hinzugefügt",

  // Einen Empfänger entfernen.
  "recipients.remove.button": "Empfänger entfernen",
  "recipients.remove.question": "{recipient} entfernen? Du kannst dann kein Geld mehr dorthin senden. Bereits erfolgte Zahlungen sind davon nicht betroffen.",
  "recipients.remove.confirm": "Ja, entfernen",
  "recipients.remove.cancel": "Behalten",
  "recipients.remove.error.gone": "Dieser Empfänger gehört nicht mehr zu deinen, es gibt also nichts zu entfernen. Geh zurück zu deinen Empfängern, um die aktuelle Liste zu sehen.",
  "recipients.remove.error.failed": "Der Empfänger wurde nicht entfernt. {reason}",
  "recipients.remove.done": "{recipient} entfernt. Du kannst kein Geld mehr dorthin senden; frühere Zahlungen bleiben erhalten.",
  "recipients.remove.status": "Empfänger entfernt.",

  // Das Formular zum Hinzufügen.
  "recipients.form.typeOption": "{type} ({currency})",
  "recipients.form.section.account": "Kontodaten",
  "recipients.form.section.holder": "Kontoinhaber",
  "recipients.form.section.address": "Adresse des Inhabers",
  "recipients.form.currencyFixed": "Währung: {currency}",
  "recipients.form.optional": "(optional)",
  "recipients.form.shape.bank": "Banküberweisung",
  "recipients.form.shape.mobile": "Mobile Money",
  "recipients.form.kind.checking": "Girokonto",
  "recipients.form.kind.savings": "Sparkonto",
  "recipients.form.holderType.individual": "Privatperson",
  "recipients.form.holderType.business": "Unternehmen",
  "recipients.form.pixKeyType.email": "E-Mail",
  "recipients.form.pixKeyType.phone": "Telefon",
  "recipients.form.pixKeyType.random": "Zufallsschlüssel",
  "recipients.form.document.passport": "Reisepass (PP)",

  // Der erste Eintrag einer Liste, bevor etwas gewählt ist.
  "recipients.form.choose.provider": "Anbieter wählen",
  "recipients.form.choose.notSpecified": "Keine Angabe",
  "recipients.form.choose.keyType": "Schlüsselart wählen",
  "recipients.form.choose.one": "Bitte wählen",
  "recipients.form.choose.fromPhone": "Aus der Telefonnummer",
  "recipients.form.choose.noDocument": "Keines",
  "recipients.form.choose.country": "Land wählen",
  "recipients.form.banks.loading": "Banken werden geladen …",
  "recipients.form.banks.none": "Keine Banken verfügbar",
  "recipients.form.gettingReady": "Das Formular wird vorbereitet…",
  "recipients.form.banks.failed": "Banken konnten nicht geladen werden",

  // Feldbeschriftungen. Was in Klammern steht, fällt weg, wenn ein Fehler
  // das Feld nennt (recipients.form.error.check).
  "recipients.form.field.shape": "Auszahlung per",
  "recipients.form.field.accountNumber": "Kontonummer",
  "recipients.form.field.accountNumberDigits": {
    one: "Kontonummer ({count} Ziffer)",
    other: "Kontonummer ({count} Ziffern)",
  },
  "recipients.form.field.accountNumberDigitsBetween": "Kontonummer ({min} bis {max} Ziffern)",
  "recipients.form.field.routingNumber": "Routing-Nummer (9 Ziffern)",
  "recipients.form.field.bankAccountType": "Giro- oder Sparkonto",
  "recipients.form.field.bank": "Bank",
  "recipients.form.field.provider": "Anbieter",
  "recipients.form.field.phone": "Telefonnummer ({prefix}…)",
  "recipients.form.field.phoneXof": "Telefonnummer ({first}, {second} oder {last}…)",
  "recipients.form.field.iban": "IBAN",
  "recipients.form.field.swift": "SWIFT/BIC",
  "recipients.form.field.clabe": "CLABE (18 Ziffern)",
  "recipients.form.field.pixKey": "Pix-Schlüssel",
  "recipients.form.field.pixKeyType": "Art des Pix-Schlüssels",
  "recipients.form.field.cpfOrCnpj": "CPF oder CNPJ (11 bis 14 Ziffern)",
  "recipients.form.field.sortCode": "Sort Code (6 Ziffern)",
  "recipients.form.field.upiId": "UPI-ID (name@bank)",
  "recipients.form.field.institutionNumber": "Institutsnummer (3 Ziffern)",
  "recipients.form.field.transitNumber": "Transitnummer (5 Ziffern)",
  "recipients.form.field.sparkAddress": "Spark-Adresse (spark1…)",
  "recipients.form.field.currency": "Währung (drei Buchstaben)",
  "recipients.form.field.holderType": "Inhaber",
  "recipients.form.field.fullName": "Vollständiger Name",
  "recipients.form.field.birthDate": "Geburtsdatum",
  "recipients.form.field.nationality": "Staatsangehörigkeit",
  "recipients.form.field.documentType": "Ausweisdokument",
  "recipients.form.field.documentNumber": "Dokumentnummer",
  "recipients.form.field.legalName": "Offizieller Firmenname",
  "recipients.form.field.registrationNumber": "Registernummer",
  "recipients.form.field.taxId": "Steuernummer",
  "recipients.form.field.street": "Straße und Hausnummer",
  "recipients.form.field.city": "Ort",
  "recipients.form.field.postalCode": "Postleitzahl",
  "recipients.form.field.country": "Land",
  // Teile eines Kontos ohne eigenes Feld, in Fehlermeldungen genannt.
  "recipients.form.part.beneficiary": "Inhaber",
  "recipients.form.part.address": "Adresse",
  "recipients.form.part.businessInfo": "Unternehmensangaben",

  // Hinzufügen: was passiert ist. {advice} ist einer der recipients.advice.*.
  "recipients.form.added": "Konto hinzugefügt.",
  "recipients.form.addedNamed": "{recipient} hinzugefügt. {advice}",
  "recipients.form.addedNamedOnly": "{recipient} hinzugefügt.",
  // {field} ist eine Feldbeschriftung, {problem} die (englischen) Worte des Dienstes.
  "recipients.form.error.check": "Prüfe „{field}“: {problem}.",
  "recipients.form.error.checkInvalid": "Prüfe „{field}“: Die Angabe ist ungültig.",
  "recipients.form.error.invalid": "Diese Angabe ist ungültig.",
  "recipients.form.error.fields": "Das Konto wurde nicht hinzugefügt: Prüfe die unten markierten Felder.",
  "recipients.form.error.failed": "Das Konto wurde nicht hinzugefügt. {reason}",
  "recipients.form.error.notReady": "Das Formular konnte nicht geladen werden. Lade die Seite neu, um es noch einmal zu versuchen. ({reason})",
  "recipients.form.error.banks": "Die Liste der Banken konnte nicht geladen werden. {reason}",
  "recipients.form.error.duplicateRemoved": "Du hast dieses Konto früher entfernt, und ein entferntes Konto kann nicht erneut hinzugefügt werden. Prüfe die Kontodaten oder füge ein anderes Konto hinzu.",
  "recipients.form.error.duplicateOf": "Dieses Konto hast du schon: {recipient}. Sende über deine Empfänger dorthin, oder prüfe die Daten, falls du ein anderes Konto gemeint hast.",
  "recipients.form.error.duplicate": "Du hast bereits ein Konto mit diesen Daten, deshalb wurde es nicht noch einmal hinzugefügt. Such es in deinen Empfängern, oder prüfe die Daten, falls du ein anderes Konto gemeint hast.",

  // Anmeldemethoden (views/security/credentials.js).
  "security.methods.type.emailCode": "E-Mail-Code",
  "security.methods.type.passkey": "Passkey",
  "security.methods.type.oauth": "Single Sign-on",
  // Eine Methode im Satz: ihre Art, dann ihr Name.
  "security.methods.named": "{type} „{name}“",
  "security.methods.link": "{provider} verknüpfen",
  "security.methods.remove": "Entfernen",
  "security.methods.onlyOne": "Deine einzige Anmeldemethode kann nicht entfernt werden",
  "security.methods.removeQuestion": "{method} entfernen? Damit kannst du dich nicht mehr bei deiner Wallet anmelden, und ihre Sitzungen werden beendet.",
  "security.methods.removeQuestionUnnamed": "Diese Anmeldemethode entfernen? Damit kannst du dich nicht mehr bei deiner Wallet anmelden, und ihre Sitzungen werden beendet.",
  "security.methods.removed": "Anmeldemethode entfernt.",
  "security.methods.error.load": "Deine Anmeldemethoden konnten nicht geladen werden. {reason}",
  "security.methods.error.removeSelf": "Du bist mit {method} angemeldet, und eine Anmeldemethode kann sich nicht selbst entfernen. Melde dich ab, melde dich auf anderem Weg an und entferne sie dann.",
  "security.methods.error.removeSelfUnnamed": "Du bist mit dieser Anmeldemethode angemeldet, und eine Anmeldemethode kann sich nicht selbst entfernen. Melde dich ab, melde dich auf anderem Weg an und entferne sie dann.",
  "security.methods.error.removeLast": "Das ist deine einzige Anmeldemethode, deshalb kann sie nicht entfernt werden. Füge zuerst einen Passkey hinzu oder verknüpfe eine andere Anmeldung und entferne sie dann.",
  "security.methods.error.removeGone": "Diese Anmeldemethode wurde bereits entfernt. Die Liste unten ist aktuell.",
  "security.methods.error.remove": "Die Anmeldemethode wurde nicht entfernt. {reason}",

  // Einen Passkey hinzufügen.
  "security.passkey.error.name": "Benenne den Passkey mit Buchstaben, Ziffern, Leerzeichen und . _ - ' ( ), höchstens {max} Zeichen.",
  "security.passkey.status.prompt": "Folge der Aufforderung deines Browsers, um den Passkey zu erstellen …",
  "security.passkey.status.added": "Passkey hinzugefügt. Du kannst dich jetzt damit anmelden.",
  "security.passkey.error.exists": "Dieser Passkey ist bereits eine deiner Anmeldemethoden. Erstelle stattdessen einen auf einem anderen Gerät oder Sicherheitsschlüssel.",
  "security.passkey.error.failed": "Der Passkey wurde nicht hinzugefügt. {reason}",

  // Single Sign-on verknüpfen; {provider} ist sein Name („Google“).
  "security.oauth.status.linked": "{provider} verknüpft. Du kannst dich jetzt damit anmelden.",
  "security.oauth.error.linked": "Dieses {provider}-Konto ist bereits mit deiner Wallet verknüpft.",
  "security.oauth.error.failed": "{provider} wurde nicht verknüpft. {reason}",

  // Die Wiederherstellungsphrase.
  "security.export.notice.hidden": "Deine Wiederherstellungsphrase ist in diesem Tab, noch verborgen. Wähle „{reveal}“ nur, wo niemand deinen Bildschirm sehen kann.",
  "security.export.notice.shown": "Deine Wiederherstellungsphrase steht unten. Schreib die Wörter der Reihe nach auf, bewahre sie sicher auf und wähle dann „{hide}“.",
  "security.export.status.ready": "Deine Wiederherstellungsphrase liegt in diesem Tab bereit. Zeig sie nur an, wo niemand deinen Bildschirm sehen kann.",
  "security.export.status.wiped": "Die Wiederherstellungsphrase ist verborgen und aus diesem Tab gelöscht.",
  "security.export.error.failed": "Die Wiederherstellungsphrase wurde nicht exportiert. {reason}",
  "security.export.error.gone": "Die Phrase ist nicht mehr in diesem Tab. Wähle „{export}“, um sie erneut zu erhalten.",

  // Eine Antwort des Wallet-Dienstes, die die Seite nicht kennt; {status} ist der HTTP-Status.
  "security.error.unexpected": "Der Wallet-Dienst hat unerwartet geantwortet ({status}). Lade die Seite neu und versuch es noch einmal.",
};

// Deutsche Texte. Anrede: „du“, wie in deutschsprachigen Finanz-Apps
// üblich. Schlüssel, Platzhalter und Pluralformen wie in en.js (siehe
// ../js/i18n.js); fehlt ein Schlüssel, zeigt die Seite den englischen Text.
//
// The messages of each part of the pages are in ./de/<part>.js, merged here.

import signin from "./de/signin.js";
import money from "./de/money.js";
import recipients from "./de/recipients.js";
import stepup from "./de/stepup.js";
import security from "./de/security.js";

export default {
  ...signin,
  ...money,
  ...recipients,
  ...stepup,
  ...security,

  // Navigation
  "nav.label": "Hauptnavigation",
  "nav.home": "Start",
  "nav.send": "Senden",
  "nav.activity": "Aktivität",
  "nav.recipients": "Empfänger",
  "nav.security": "Sicherheit",
  "nav.signOut": "Abmelden",
  "nav.addFunds": "Geld hinzufügen",

  // Beträge, wie format.js sie schreibt
  "money.btc.name": "Bitcoin",
  "money.btc.amount": "{amount}\u00a0BTC",
  "money.sats.amount": { one: "{amount}\u00a0Sat", other: "{amount}\u00a0Sats" },
  "money.rate": "1\u00a0{unit} = {value}\u00a0{price}",

  // Eingetippte Beträge (format.js parseMoney)
  "money.error.empty": "Gib einen Betrag ein, zum Beispiel {example}.",
  "money.error.invalid": "Gib einen Betrag wie {example} ein.",
  "money.error.negative": "Gib einen Betrag über null ein, ohne Minuszeichen.",
  "money.error.zero": "Gib einen Betrag über null ein.",
  "money.error.decimals": {
    one: "Für {currency} ist nur eine Nachkommastelle möglich, etwa {example}.",
    other: "Für {currency} sind höchstens {count} Nachkommastellen möglich, etwa {example}.",
  },
  "money.error.wholeOnly": "{currency} hat keine Nachkommastellen. Gib einen ganzen Betrag ein, etwa {example}.",
  "money.error.separator": "Trenne die Nachkommastellen mit „{decimal}“, etwa {example}.",
  "money.error.ambiguous": "„{text}“ ist nicht eindeutig: Gib {whole} für den ganzen Betrag ein oder {fraction} mit Nachkommastellen.",
  "money.error.tooLarge": "Das ist mehr als {max}. Gib einen kleineren Betrag ein.",
};

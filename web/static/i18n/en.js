// English messages: the reference catalogue, and the fallback for every key
// another language lacks. Conventions (key names, placeholders, plurals) are
// described at the top of ../js/i18n.js. "\u00a0" is a no-break space: an
// amount and its unit stay on one line.
//
// The messages of each part of the pages are in ./en/<part>.js, merged here.

import signin from "./en/signin.js";
import money from "./en/money.js";
import recipients from "./en/recipients.js";
import stepup from "./en/stepup.js";
import security from "./en/security.js";

export default {
  ...signin,
  ...money,
  ...recipients,
  ...stepup,
  ...security,

  // Navigation, the same in every view.
  "nav.label": "Main",
  "nav.home": "Home",
  "nav.send": "Send",
  "nav.activity": "Activity",
  "nav.recipients": "Recipients",
  "nav.security": "Security",
  "nav.signOut": "Sign out",
  "nav.addFunds": "Add funds",

  // Money as format.js writes it.
  "money.btc.name": "Bitcoin",
  "money.btc.amount": "{amount}\u00a0BTC",
  "money.sats.amount": { one: "{amount}\u00a0sat", other: "{amount}\u00a0sats" },
  "money.rate": "1\u00a0{unit} = {value}\u00a0{price}",

  // Amounts typed by the person (format.js parseMoney).
  "money.error.empty": "Type an amount, like {example}.",
  "money.error.invalid": "Type an amount like {example}.",
  "money.error.negative": "Type an amount above zero, without a minus sign.",
  "money.error.zero": "Type an amount above zero.",
  "money.error.decimals": {
    one: "Use at most {count} decimal for {currency}, like {example}.",
    other: "Use at most {count} decimals for {currency}, like {example}.",
  },
  "money.error.wholeOnly": "{currency} has no decimals: type a whole amount, like {example}.",
  "money.error.separator": "Use “{decimal}” for the decimals, like {example}.",
  "money.error.ambiguous": "“{text}” could be read two ways: type {whole} for the whole amount or {fraction} with decimals.",
  "money.error.tooLarge": "That is more than {max}. Type a smaller amount.",
};

// Deutsche Texte des Teils recipients (Schlüssel wie in ../en/recipients.js).
// In ../de.js zusammengeführt; Regeln oben in ../../js/i18n.js.

export default {
};

// Deutsche Texte des Teils signin (Schlüssel wie in ../en/signin.js).
// In ../de.js zusammengeführt; Regeln oben in ../../js/i18n.js.

export default {
};

// Deutsche Texte des Teils money (Schlüssel wie in ../en/money.js).
// In ../de.js zusammengeführt; Regeln oben in ../../js/i18n.js.

export default {
};

// English messages of the money part: Send, Activity, a payment, its receipt (send.js, transactions.js, money.js, events.js).
// Merged into ../en.js; conventions at the top of ../../js/i18n.js.

export default {
};

// English messages of the recipients part: Recipients, the add form, sign-in methods, recovery phrase (accounts.js, credentials.js).
// Merged into ../en.js; conventions at the top of ../../js/i18n.js.

export default {
};

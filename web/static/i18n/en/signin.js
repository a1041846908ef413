// English messages of the signin part: sign-in page, header, navigation, Home, Security's facts, sessions (app.js, balance.js, sessions.js, webauthn.js, api.js, index.html's static text).
// Merged into ../en.js; conventions at the top of ../../js/i18n.js.

export default {
};

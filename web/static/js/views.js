// The table of views: for each view its name (its module is
// views/<name>.js), its address pattern ({id} is one path segment, a
// resource id), the message key of its title and the navigation entry it
// belongs to, and "public": true for a view shown to a person signed out
// too (the link of a security e-mail), which is not behind the sign-in
// page and must not need a session. The first entry whose pattern matches an address names its
// view, so a word ("/activity/statement") comes before an {id} in its place.
//
// Read by router.js, and by the server (web/routes.go), which reads the
// array after "export default" as JSON: keep it JSON (quoted keys, no
// comments inside, no trailing commas).

export default [
  { "name": "home", "path": "/", "title": "home.documentTitle", "nav": "home" },
  { "name": "send", "path": "/send", "title": "send.title", "nav": "send" },
  { "name": "activity", "path": "/activity", "title": "activity.title", "nav": "activity" },
  { "name": "statement", "path": "/activity/statement", "title": "statement.title", "nav": "activity" },
  { "name": "payment", "path": "/activity/{id}", "title": "payment.title", "nav": "activity" },
  { "name": "receipt", "path": "/activity/{id}/receipt", "title": "receipt.title", "nav": "activity" },
  { "name": "recipients", "path": "/recipients", "title": "recipients.title", "nav": "recipients" },
  { "name": "recipient-new", "path": "/recipients/new", "title": "recipients.new.title", "nav": "recipients" },
  { "name": "recipient", "path": "/recipients/{id}", "title": "recipients.detail.title", "nav": "recipients" },
  { "name": "security", "path": "/security", "title": "security.title", "nav": "security" },
  { "name": "sign-out-everywhere", "path": "/sign-out-everywhere", "title": "signOutEverywhere.title", "nav": "security", "public": true }
];

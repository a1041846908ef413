// The OpenID Connect provider sends the sign-in pop-up back here with the
// ID token (or an error) in the URL fragment. The fragment never reaches a
// server; this page hands it to the wallet tab on the "wallet-oauth"
// BroadcastChannel, clears it from the address bar and closes the pop-up.
// The hand-over comes first: the page's words (i18n.js, in the browser's
// language) follow, and a language that does not load changes nothing.
import { applyTranslations, setLocale, t } from "./i18n.js";

const params = new URLSearchParams(location.hash.slice(1));
history.replaceState(null, "", location.pathname);
const message = {
  state: params.get("state") || "",
  idToken: params.get("id_token") || "",
  error: params.get("error") || "",
};
const status = document.getElementById("status");
if (message.state) {
  const channel = new BroadcastChannel("wallet-oauth");
  channel.postMessage(message);
  channel.close();
}
try {
  await setLocale();
  applyTranslations(document);
} catch (err) {
  console.warn("i18n: the page stays in English", err);
}
if (!message.state) {
  status.textContent = t("oauthCallback.noState");
} else {
  status.textContent = message.error ? t("oauthCallback.failed") : t("oauthCallback.done");
  window.close();
}

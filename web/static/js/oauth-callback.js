// The OpenID Connect provider sends the sign-in pop-up back here with the
// ID token (or an error) in the URL fragment. The fragment never reaches a
// server; this page hands it to the wallet tab on the "wallet-oauth"
// BroadcastChannel, clears it from the address bar and closes the pop-up.
const params = new URLSearchParams(location.hash.slice(1));
history.replaceState(null, "", location.pathname);
const message = {
  state: params.get("state") || "",
  idToken: params.get("id_token") || "",
  error: params.get("error") || "",
};
const status = document.getElementById("status");
if (!message.state) {
  status.textContent = "This page finishes a sign-in started from the wallet. Go back to the wallet and start again.";
} else {
  const channel = new BroadcastChannel("wallet-oauth");
  channel.postMessage(message);
  channel.close();
  status.textContent = message.error ? "The sign-in was not completed. You can close this window." : "Signed in. You can close this window.";
  window.close();
}

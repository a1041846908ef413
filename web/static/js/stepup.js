// Step-up: the person's own yes to one exact action (a payment above their
// wallet's threshold, a first payment to a recipient, showing the recovery
// phrase, a change of sign-in methods). The service holds the action and
// sends an scaChallenge; this module asks the person in a dialog and gives
// the service the proof:
//
//   - with a passkey: Secure Payment Confirmation where the browser offers
//     it for a payment (the browser itself shows the payee and the amount,
//     and the service checks what it showed), otherwise a passkey prompt
//     (navigator.credentials.get with user verification) whose challenge
//     the service made from the action's payloadToSign, so that the passkey
//     signs this action and no other;
//   - without one: a code the service e-mails, naming the action.
//
// confirmStepUp resolves with the service's answer to the proof, or rejects
// with StepUpCancelled when the person says no, or with the ApiError that
// ended it (the confirmation expired, the wallet is locked).

import { api, ApiError, messageOf } from "./api.js";
import { t } from "./i18n.js";
import { formatTime } from "./format.js";
import { assertionJSON, fromB64url, passkeysAvailable } from "./webauthn.js";

const $ = (id) => document.getElementById(id);

/** The person closed the confirmation: nothing happened. */
export class StepUpCancelled extends Error {
  constructor() {
    super(t("stepup.cancelled"));
    this.name = "StepUpCancelled";
  }
}

const REASONS = {
  AMOUNT_OVER_THRESHOLD: "stepup.reason.amount",
  FIRST_PAYMENT_TO_RECIPIENT: "stepup.reason.firstPayment",
  RECIPIENT_ADDED_RECENTLY: "stepup.reason.newRecipient",
  SENSITIVE_ACTION: "stepup.reason.sensitive",
  LIMITS_LOOSENED: "stepup.reason.limits",
};

let open = null; // the confirmation shown, one at a time
let spcDeclined = false; // the browser's payment confirmation ended without a yes in this page

/**
 * Asks the person to confirm the held action of challenge.
 *
 * @param {object} challenge the service's scaChallenge
 * @param {{authorizePath: string, resendPath: string, what: string}} where
 *   the BFF paths of the proof and of the e-mailed code, and the action in
 *   the person's words ("Send 150.00 USD to Ana Diaz")
 * @returns {Promise<any>} the answer of authorizePath
 */
export function confirmStepUp(challenge, { authorizePath, resendPath, what, returnFocus }) {
  if (open) open.cancel();
  const dialog = $("stepup");
  return new Promise((resolve, reject) => {
    // sending: a proof is on its way; the person can no longer take the
    // yes back (the service may be executing it), so Cancel waits.
    const state = { busy: false, done: false, sending: false };
    const finish = (fn, value) => {
      if (state.done) return;
      state.done = true;
      open = null;
      controller.abort();
      if (dialog.open) dialog.close();
      if (returnFocus) returnFocus.focus();
      fn(value);
    };
    const controller = new AbortController();
    const on = (el, type, fn) => el.addEventListener(type, fn, { signal: controller.signal });
    open = { cancel: () => finish(reject, new StepUpCancelled()), sending: () => state.sending };

    $("stepup-what").textContent = what;
    const reasons = (challenge.reasons || []).map((r) => t(REASONS[r] || "stepup.reason.other"));
    $("stepup-why").textContent = reasons.join(" ");
    $("stepup-why").hidden = reasons.length === 0;
    $("stepup-expiry").textContent = t("stepup.expires", { time: formatTime(challenge.expiresAt) });
    showError("");
    const byPasskey = challenge.factor === "PASSKEY";
    $("stepup-passkey").hidden = !byPasskey;
    $("stepup-code").hidden = byPasskey;
    $("stepup-code-input").value = "";
    $("stepup-code-hint").textContent = "";
    $("stepup-cancel").disabled = false;

    const authorize = async (body) => {
      state.sending = true;
      $("stepup-cancel").disabled = true;
      try {
        const res = await api("POST", authorizePath, { body });
        finish(resolve, res.data);
      } catch (err) {
        // A refused proof (400) can be given again, and an unreachable
        // service tried again; any other answer ends the confirmation
        // (locked, expired, gone, refused by a limit after a good proof)
        // and the caller says what now.
        if (err instanceof ApiError && err.status !== 400 && err.status !== 0 && err.status < 500) {
          finish(reject, err);
          return;
        }
        showError(proofProblem(err));
      } finally {
        state.sending = false;
        $("stepup-cancel").disabled = false;
      }
    };
    const run = async (fn) => {
      if (state.busy || state.done) return;
      state.busy = true;
      setBusy(true);
      try {
        await fn();
      } finally {
        state.busy = false;
        setBusy(false);
      }
    };

    on($("stepup-cancel"), "click", () => !state.sending && open && open.cancel());
    on(dialog, "cancel", (event) => {
      event.preventDefault(); // Escape: the same as Cancel, not while a proof is on its way
      if (!state.sending && open) open.cancel();
    });
    on($("stepup-passkey-button"), "click", () => run(async () => {
      showError("");
      let assertion;
      try {
        assertion = await passkeyProof(challenge);
      } catch (err) {
        showError(passkeyProblem(err));
        return;
      }
      await authorize({ passkeyAssertion: assertion, origin: location.origin });
    }));
    on($("stepup-code"), "submit", (event) => {
      event.preventDefault();
      const code = $("stepup-code-input").value.replace(/\s+/g, "");
      if (!/^\d{6}$/.test(code)) {
        showError(t("stepup.code.invalid"));
        $("stepup-code-input").focus();
        return;
      }
      run(() => authorize({ code }));
    });
    on($("stepup-code-resend"), "click", () => run(() => sendCode(resendPath, challenge, true)));

    dialog.showModal();
    if (byPasskey) {
      $("stepup-passkey-button").focus();
    } else {
      $("stepup-code-input").focus();
      // The code of a held signed action is sent when the step is shown;
      // a payment's was sent with its challenge.
      if (!challenge.codeSentTo) run(() => sendCode(resendPath, challenge, false));
      else $("stepup-code-hint").textContent = t("stepup.code.sent", { to: challenge.codeSentTo });
    }
  });
}

async function sendCode(path, challenge, again) {
  try {
    await api("POST", path);
    $("stepup-code-hint").textContent = t(again ? "stepup.code.resent" : "stepup.code.sentNow");
    showError("");
  } catch (err) {
    showError(messageOf(err));
  }
}

function setBusy(busy) {
  for (const id of ["stepup-passkey-button", "stepup-code-submit", "stepup-code-resend"]) {
    const el = $(id);
    if (busy) el.setAttribute("aria-busy", "true");
    else el.removeAttribute("aria-busy");
    el.disabled = busy;
  }
}

function showError(text) {
  const el = $("stepup-error");
  el.textContent = text;
  el.hidden = text === "";
}

// proofProblem is what to tell the person when the service refused the
// proof: its reason, and how many tries are left before the lock.
function proofProblem(err) {
  if (err instanceof ApiError && err.status === 400) {
    const left = err.details && Number.isFinite(err.details.attemptsLeft) ? err.details.attemptsLeft : null;
    return left === null ? err.message : t("stepup.refused", { reason: err.message, count: left });
  }
  return messageOf(err);
}

function passkeyProblem(err) {
  if (err && (err.name === "NotAllowedError" || err.name === "AbortError")) return t("stepup.passkey.cancelled");
  if (err && err.name === "SecurityError") return t("signin.passkey.error.address");
  return t("stepup.passkey.failed", { reason: err && err.message ? err.message : String(err) });
}

// passkeyProof asks the authenticator to sign the challenge: with Secure
// Payment Confirmation when the service offered it and the browser can,
// else with a passkey prompt.
async function passkeyProof(challenge) {
  if (!passkeysAvailable()) throw new Error(t("stepup.passkey.unavailable"));
  const spc = challenge.securePaymentConfirmation;
  if (spc && !spcDeclined && (await spcAvailable(spc))) {
    try {
      return await spcAssertion(spc);
    } catch (err) {
      if (!err || err.name !== "NotSupportedError") {
        // Declined, or the browser could not use this passkey for it
        // (the two look alike from here): this press ends, and the next
        // one asks with the plain passkey prompt, never two prompts in
        // a row.
        spcDeclined = true;
        throw err;
      }
      // No payment confirmation for this passkey here: the passkey
      // prompt asks the same question.
    }
  }
  const o = challenge.passkeyAssertionOptions;
  const cred = await navigator.credentials.get({
    publicKey: {
      challenge: fromB64url(o.challenge),
      rpId: o.rpId,
      allowCredentials: o.allowCredentials.map((c) => ({ type: c.type, id: fromB64url(c.id) })),
      userVerification: o.userVerification || "required",
      timeout: o.timeout || 120000,
    },
  });
  if (!cred) throw new Error(t("stepup.passkey.noAnswer"));
  return assertionJSON(cred);
}


function spcRequest(spc) {
  return new PaymentRequest(
    [{
      supportedMethods: "secure-payment-confirmation",
      data: {
        credentialIds: spc.credentialIds.map((id) => fromB64url(id)),
        challenge: fromB64url(spc.challenge),
        rpId: spc.rpId,
        payeeName: spc.payeeName,
        instrument: { displayName: spc.instrumentDisplayName, icon: new URL("/favicon.svg", location.href).href, iconMustBeShown: false },
        timeout: spc.timeout,
      },
    }],
    { total: { label: t("stepup.spc.total"), amount: { currency: spc.total.currency, value: spc.total.value } } },
  );
}

async function spcAvailable(spc) {
  if (typeof window.PaymentRequest !== "function") return false;
  try {
    if (typeof PaymentRequest.securePaymentConfirmationAvailability === "function") {
      return (await PaymentRequest.securePaymentConfirmationAvailability()) === "available";
    }
    return await spcRequest(spc).canMakePayment();
  } catch {
    return false;
  }
}

async function spcAssertion(spc) {
  const response = await spcRequest(spc).show();
  try {
    return assertionJSON(response.details);
  } finally {
    await response.complete("success");
  }
}

/** The confirmation shown, if any, is cancelled (the person signed out). */
export function cancelStepUp() {
  if (open) open.cancel();
}

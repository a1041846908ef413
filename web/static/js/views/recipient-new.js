// The view that adds a recipient (/recipients/new): the add-recipient form
// of recipientform.js, which owns everything inside #add-account. An account
// added takes the person to the list, where the form then puts the focus
// on it.

import { initRecipientForm, showRecipientForm, signInRecipientForm, signOutRecipientForm } from "../recipientform.js";
import { current, navigate } from "../router.js";

/** Wires the view once. */
export function init({ wallet, setStatus }) {
  initRecipientForm({ wallet, setStatus });
  document.addEventListener("wallet:account-added", () => {
    if (current() && current().name === "recipient-new") navigate("/recipients");
  });
}

export const signIn = signInRecipientForm;
export const signOut = signOutRecipientForm;
export const show = showRecipientForm;

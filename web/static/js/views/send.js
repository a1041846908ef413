// The Send view (/send): the send flow, in steps (send.js): recipient,
// amount, review, sent.

import { enterSend, hideSend, initSend, showSend } from "../send.js";

/** Wires the view once. */
export function init({ wallet, key, keyPending, keyReady, setStatus }) {
  initSend({ wallet, key, keyPending, keyReady, setStatus });
}

export const signIn = showSend;
export const signOut = hideSend;
export const show = enterSend;

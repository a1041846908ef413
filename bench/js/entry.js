// The Turnkey reference implementations that the browser benchmark
// (internal/bench/browser, `make bench`) times beside the wasm wallet.
// build.sh bundles this file into dist/turnkey.js as an IIFE; the
// benchmark page loads it and reads globalThis.turnkeyBench.
//
// The SDK functions are exposed as they are. The two wrappers below only
// give them the shape of the wasm calls they are compared with (hex and
// strings in, hex and strings out), so that both sides of a pair do the same
// encoding work around the cryptography.
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import {
  decryptCredentialBundle,
  encryptOtpCodeToBundle,
  generateP256KeyPair,
  getPublicKey,
  hpkeEncrypt,
} from "@turnkey/crypto";

const HEX = "0123456789abcdef";

function toHex(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) {
    s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
  }
  return s;
}

function fromHex(hex) {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new Error("not hex: " + hex);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(hex.substr(2 * i, 2), 16);
  }
  return out;
}

const encoder = new TextEncoder();

globalThis.turnkeyBench = Object.freeze({
  ApiKeyStamper,
  decryptCredentialBundle,
  encryptOtpCodeToBundle,
  generateP256KeyPair,
  getPublicKey,
  hpkeEncrypt,

  // hpkeSeal is paywallet.hpkeSeal's counterpart: hpkeEncrypt to an
  // uncompressed public key given in hex. hpkeEncrypt returns the compressed
  // encapsulated key (33 bytes) followed by the ciphertext; both are
  // returned in hex, as the wasm call returns its (uncompressed) key.
  hpkeSeal(recipientPublicKeyHex, plaintext) {
    const sealed = hpkeEncrypt({
      plainTextBuf: encoder.encode(plaintext),
      targetKeyBuf: fromHex(recipientPublicKeyHex),
    });
    return {
      encappedPublic: toHex(sealed.subarray(0, 33)),
      ciphertext: toHex(sealed.subarray(33)),
    };
  },

  // openSessionKey is paywallet.decryptSessionKey's counterpart:
  // decryptCredentialBundle opens the base58check credential bundle, and
  // getPublicKey derives the session key's public key, which the wasm call
  // also computes (it returns it) and which a stamper needs.
  openSessionKey(bundle, embeddedKeyHex) {
    const privateKey = decryptCredentialBundle(bundle, embeddedKeyHex);
    return { privateKey, publicKey: toHex(getPublicKey(privateKey, true)) };
  },
});

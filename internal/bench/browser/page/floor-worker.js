// The floor of a call through a Worker, for internal/bench/browser: the
// same WebCrypto work as the page's floor (sign with a key imported once,
// generate a key pair and export its public key), done in a dedicated
// Worker and asked for with one message per call and one answer, as
// wallet.js asks wallet-worker.js. Beside the module's figures it shows how
// much of them is the round trip itself.
//
//   page -> worker  {id, op: "import", jwk} | {id, op: "sign", payload} | {id, op: "keygen"}
//   worker -> page  {id, ok: true, value} | {id, ok: false, message}

const ecdsa = { name: "ECDSA", namedCurve: "P-256" };
const ecdsaSha256 = { name: "ECDSA", hash: "SHA-256" };
const encoder = new TextEncoder();
let key = null;

const ops = {
  async import({ jwk }) {
    key = await crypto.subtle.importKey("jwk", jwk, ecdsa, false, ["sign"]);
    return true;
  },
  sign: ({ payload }) => crypto.subtle.sign(ecdsaSha256, key, encoder.encode(payload)),
  async keygen() {
    const kp = await crypto.subtle.generateKey(ecdsa, false, ["sign"]);
    return crypto.subtle.exportKey("raw", kp.publicKey);
  },
};

self.onmessage = async (event) => {
  const m = event.data;
  try {
    self.postMessage({ id: m.id, ok: true, value: await ops[m.op](m) });
  } catch (err) {
    self.postMessage({ id: m.id, ok: false, message: String(err && err.message) });
  }
};

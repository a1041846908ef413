// An implementation of the Standard Webhooks v1a check that shares nothing
// with the Go package: Node's own Ed25519 (OpenSSL). Run by
// TestStandardVectorsNode as `node ed25519_check.mjs <vectors.json>`.
//
// For every vector, every v1a entry of "signature" (the i-th entry belongs
// to keys[i]) must verify under the whpk_ key with crypto.verify over
// "<id>.<timestamp>.<body>", and must not verify over a changed body. When
// the vector holds the whsk_ seed, the public key Node derives from it must
// be the whpk_ one, and Node's signature must be the entry byte for byte
// (Ed25519 signatures are deterministic).
import { readFileSync } from "node:fs";
import crypto from "node:crypto";

const b64 = (s) => Buffer.from(s, "base64");
const prefixed = (s, p) => {
  if (!s.startsWith(p)) throw new Error(`${s} does not start with ${p}`);
  return b64(s.slice(p.length));
};
// PKCS #8 wrapping of an Ed25519 seed (RFC 8410).
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex");

const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
let failures = 0;
let checked = 0;
const fail = (name, msg) => {
  failures++;
  console.error(`FAIL ${name}: ${msg}`);
};
for (const v of doc.vectors) {
  const msg = Buffer.from(`${v.id}.${v.timestamp}.${v.body}`, "utf8");
  const changed = Buffer.concat([msg, Buffer.from(" ")]);
  const entries = v.signature.split(" ").filter((e) => e.startsWith("v1a,"));
  if (entries.length !== v.keys.length) {
    fail(v.name, `${entries.length} v1a entries for ${v.keys.length} keys`);
    continue;
  }
  v.keys.forEach((k, i) => {
    const raw = prefixed(k.publicKey, "whpk_");
    const pub = crypto.createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
      format: "jwk",
    });
    const sig = b64(entries[i].slice(4));
    if (!crypto.verify(null, msg, pub, sig)) fail(v.name, `entry ${i} does not verify`);
    if (crypto.verify(null, changed, pub, sig)) fail(v.name, `entry ${i} verifies a changed body`);
    if (k.secretKey) {
      const seed = prefixed(k.secretKey, "whsk_");
      const priv = crypto.createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: "der", type: "pkcs8" });
      const derived = crypto.createPublicKey(priv).export({ format: "jwk" }).x;
      if (derived !== raw.toString("base64url")) fail(v.name, `key ${i}: whpk_ is not the seed's public key`);
      const mine = crypto.sign(null, msg, priv).toString("base64");
      if (`v1a,${mine}` !== entries[i]) fail(v.name, `entry ${i}: node signs v1a,${mine}`);
    }
    checked++;
  });
}
if (failures > 0) process.exit(1);
console.log(`ok ${doc.vectors.length} vectors, ${checked} signatures`);

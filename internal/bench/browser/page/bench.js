// The page side of internal/bench/browser. Go drives it over the DevTools
// protocol: bench.start(), bench.setup(inputs), bench.samples(), then
// bench.measure(op, ...) for each operation; a fresh tab per load of a
// module calls bench.loadModule(url). Every function returns a Promise of
// plain JSON.
//
// The wallet module runs as the wallet page runs it: in its dedicated
// Worker, reached through the page's client, both served from
// web/static/js unchanged (wallet.js, wallet-worker.js). Every "wasm" call
// below is a client call, one message to the worker and one back.
//
// Each operation has one entry per implementation in OPS. An entry's make()
// returns {call, after}: call() does one operation and is what the loops
// time (awaited one at a time, as a page would use it); after(), if any,
// runs outside the timed region to release what the calls kept (wasm key
// handles), so a run does not pay for the one before it.
import { loadWallet } from "/js/wallet.js";

{
  const encoder = new TextEncoder();
  const ecdsa = { name: "ECDSA", namedCurve: "P-256" };
  const ecdsaSha256 = { name: "ECDSA", hash: "SHA-256" };

  let inp = null; // the inputs Go made (bench.setup)
  let client = null; // {handle, publicKey, publicKeyUncompressed}: the wasm recipient key of the session bundle
  let otpClient = null; // the wasm signing key the OTP bundle names
  let sessionHandle = null; // the session key inside wasm, opened from inp.sessionBundleWasm
  let webcryptoKey = null; // the same session key, imported into WebCrypto
  let stamper = null; // ApiKeyStamper, default runtime (WebCrypto in a browser)
  let stamperPure = null; // ApiKeyStamper, runtimeOverride "purejs" (@noble/curves)

  function hex(buf) {
    const b = new Uint8Array(buf);
    let s = "";
    for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, "0");
    return s;
  }

  // handleSink collects the wasm handles that timed calls create, so that
  // after() can forget them outside the timed region.
  function handleSink() {
    let handles = [];
    return {
      keep(key) {
        handles.push(key.handle);
        return key;
      },
      async after() {
        const hs = handles;
        handles = [];
        await Promise.all(hs.map((h) => paywallet.forget(h)));
      },
    };
  }

  const tk = () => globalThis.turnkeyBench;

  // floorWorker asks floor-worker.js for the WebCrypto floor done in a
  // Worker, one message per call, as the wallet's client asks its worker.
  let floorWorker = null;
  const floorPending = new Map();
  let floorNext = 0;
  function inFloorWorker(op, fields = {}) {
    if (!floorWorker) {
      floorWorker = new Worker("/floor-worker.js", { type: "module", name: "floor" });
      floorWorker.onmessage = (event) => {
        const m = event.data;
        const p = floorPending.get(m.id);
        floorPending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(new Error(m.message));
      };
    }
    return new Promise((resolve, reject) => {
      const id = ++floorNext;
      floorPending.set(id, { resolve, reject });
      floorWorker.postMessage({ id, op, ...fields });
    });
  }

  const OPS = [
    {
      name: "stamp",
      impl: "wasm",
      function: "paywallet.stamp(sessionHandle, payload)",
      make: () => ({ call: () => paywallet.stamp(sessionHandle, inp.payload) }),
    },
    {
      name: "stamp",
      impl: "turnkey-js",
      function:
        "ApiKeyStamper.stamp(payload), default browser runtime: per call crypto.subtle.importKey(jwk) + sign + DER + base64url",
      make: () => ({ call: async () => (await stamper.stamp(inp.payload)).stampHeaderValue }),
    },
    {
      name: "stamp",
      impl: "turnkey-js-purejs",
      function: 'ApiKeyStamper.stamp(payload) with runtimeOverride "purejs" (@noble/curves p256.sign)',
      make: () => ({ call: async () => (await stamperPure.stamp(inp.payload)).stampHeaderValue }),
    },
    {
      name: "stamp",
      impl: "webcrypto",
      function:
        'crypto.subtle.sign({name:"ECDSA",hash:"SHA-256"}, key imported once, payload): raw r||s, no DER, no stamp JSON',
      make: () => ({ call: () => crypto.subtle.sign(ecdsaSha256, webcryptoKey, encoder.encode(inp.payload)) }),
    },
    {
      name: "stamp",
      impl: "webcrypto-worker",
      function:
        "the WebCrypto floor's sign in a dedicated Worker (floor-worker.js), one postMessage each way: the round trip's own cost",
      make: () => ({ call: () => inFloorWorker("sign", { payload: inp.payload }) }),
    },
    {
      name: "hpke-seal",
      impl: "wasm",
      function: "paywallet.hpkeSeal(recipientPublicKeyHex, plaintext)",
      make: () => ({ call: () => paywallet.hpkeSeal(inp.recipient, inp.plaintext) }),
    },
    {
      name: "hpke-seal",
      impl: "turnkey-js",
      function: "hpkeEncrypt({plainTextBuf, targetKeyBuf}) from @turnkey/crypto, hex in and out (turnkeyBench.hpkeSeal)",
      make: () => ({ call: async () => tk().hpkeSeal(inp.recipient, inp.plaintext) }),
    },
    {
      name: "hpke-open",
      impl: "wasm",
      function:
        "paywallet.decryptSessionKey(recipientHandle, credentialBundle): WebCrypto ECDH, HPKE open, PKCS#8 import as a non-extractable ECDSA key, public key recovered",
      make: () => {
        const sink = handleSink();
        return {
          call: async () => sink.keep(await paywallet.decryptSessionKey(client.handle, inp.sessionBundleWasm)),
          after: sink.after,
        };
      },
    },
    {
      name: "hpke-open",
      impl: "turnkey-js",
      function:
        "decryptCredentialBundle(credentialBundle, embeddedKey) + getPublicKey(sessionKey, true) (turnkeyBench.openSessionKey)",
      make: () => ({ call: async () => tk().openSessionKey(inp.sessionBundleJs, inp.embeddedKey) }),
    },
    {
      name: "otp-seal",
      impl: "wasm",
      function: "paywallet.sealOtp(clientHandle, code, targetBundle, pinnedSigner): verifies the bundle, then seals",
      make: () => ({ call: () => paywallet.sealOtp(otpClient.handle, inp.otpCode, inp.targetBundle, inp.pinnedSigner) }),
    },
    {
      name: "otp-seal",
      impl: "turnkey-js",
      function:
        "encryptOtpCodeToBundle(code, targetBundle, clientPublicKey, pinnedSigner): verifies the bundle, then seals",
      make: () => ({
        call: () =>
          tk().encryptOtpCodeToBundle(inp.otpCode, inp.targetBundle, otpClient.publicKeyUncompressed, inp.pinnedSigner),
      }),
    },
    {
      name: "keygen",
      impl: "wasm",
      function: 'paywallet.generateKey("signing"): a non-extractable WebCrypto ECDSA key under a new handle',
      make: () => {
        const sink = handleSink();
        return { call: async () => sink.keep(await paywallet.generateKey("signing")), after: sink.after };
      },
    },
    {
      name: "keygen",
      impl: "turnkey-js",
      function: "generateP256KeyPair()",
      make: () => ({ call: async () => tk().generateP256KeyPair() }),
    },
    {
      name: "keygen",
      impl: "webcrypto",
      function: 'crypto.subtle.generateKey(ECDSA P-256, non-extractable, ["sign"]) + exportKey("raw", publicKey)',
      make: () => ({
        call: async () => {
          const kp = await crypto.subtle.generateKey(ecdsa, false, ["sign"]);
          return crypto.subtle.exportKey("raw", kp.publicKey);
        },
      }),
    },
    {
      name: "keygen",
      impl: "webcrypto-worker",
      function: "the WebCrypto floor's generateKey + exportKey in a dedicated Worker (floor-worker.js), one postMessage each way",
      make: () => ({ call: () => inFloorWorker("keygen") }),
    },
  ];

  // loadModule loads the module at url as the wallet page does, through
  // the page's client: a new Worker, the Go runtime and the direct-call
  // glue imported in it, the module fetched, compiled and started there,
  // until its ready message reaches the page. It resolves with the time
  // that took and the version the module reported. The floor module (kind
  // "floor") goes the same way; only the module differs.
  async function loadModule(url) {
    if (globalThis.paywallet) throw new Error("loadModule: this tab has loaded a module already");
    const t0 = performance.now();
    const w = await loadWallet(url, { timeoutMs: 60000 });
    const t1 = performance.now();
    return { readyMs: t1 - t0, version: w.version };
  }

  // start loads the module and makes the two client keys the benchmark
  // uses: a signing key the OTP seal names, and a recipient key the session
  // key bundle is sealed to (a key has one purpose).
  async function start(url) {
    await loadWallet(url, { timeoutMs: 60000 });
    if (typeof globalThis.turnkeyBench !== "object") {
      throw new Error("turnkey.js did not define globalThis.turnkeyBench");
    }
    if (typeof paywallet.hpkeSeal !== "function") {
      throw new Error(
        "the wasm module (paywallet.version " + paywallet.version + ") has no hpkeSeal: rebuild it with `make wasm`",
      );
    }
    client = await paywallet.generateKey("recipient");
    otpClient = await paywallet.generateKey("signing");
    return {
      crossOriginIsolated: globalThis.crossOriginIsolated === true,
      userAgent: navigator.userAgent,
      wasmVersion: paywallet.version,
      clientPublicKey: client.publicKeyUncompressed,
      otpClientPublicKey: otpClient.publicKeyUncompressed,
    };
  }

  // setup takes the inputs Go made for the client key and prepares every
  // implementation's state, outside any timing.
  async function setup(inputs) {
    inp = inputs;
    const session = await paywallet.decryptSessionKey(client.handle, inp.sessionBundleWasm);
    if (session.publicKey !== inp.sessionPublicKey) {
      throw new Error("the session key opened in wasm is not the one Go sealed");
    }
    sessionHandle = session.handle;
    webcryptoKey = await crypto.subtle.importKey("jwk", inp.sessionJwk, ecdsa, false, ["sign"]);
    await inFloorWorker("import", { jwk: inp.sessionJwk });
    const cfg = { apiPublicKey: inp.sessionPublicKey, apiPrivateKey: inp.sessionPrivateKey };
    stamper = new (tk().ApiKeyStamper)(cfg);
    stamperPure = new (tk().ApiKeyStamper)({ ...cfg, runtimeOverride: "purejs" });
    return OPS.map(({ name, impl, function: fn }) => ({ name, impl, function: fn }));
  }

  // samples runs every implementation once and returns its output, for Go
  // to check that both sides of each pair compute the same thing.
  async function samples() {
    const out = {};
    for (const op of OPS) {
      const { call, after } = op.make();
      let v = await call();
      if (v instanceof ArrayBuffer) v = hex(v);
      out[op.name + "/" + op.impl] = v;
      if (after) await after();
    }
    return out;
  }

  // measure times every implementation of one operation: a warm-up of at
  // least n calls and warmMs milliseconds each (V8 tiers up, wasm included),
  // then runs rounds; in each round every implementation does n calls, in
  // an order rotated from round to round so that none always follows the
  // same neighbour. It returns the milliseconds per call of every run.
  async function measure(name, n, runs, warmMs) {
    const ops = OPS.filter((o) => o.name === name);
    if (ops.length === 0) throw new Error("unknown operation " + name);
    const fns = ops.map((o) => o.make());
    for (const f of fns) {
      const t0 = performance.now();
      for (let i = 0; i < n || performance.now() - t0 < warmMs; i++) await f.call();
      if (f.after) await f.after();
    }
    const times = ops.map(() => []);
    for (let r = 0; r < runs; r++) {
      for (let k = 0; k < fns.length; k++) {
        const j = (k + r) % fns.length;
        const f = fns[j];
        const t0 = performance.now();
        for (let i = 0; i < n; i++) await f.call();
        times[j].push((performance.now() - t0) / n);
        if (f.after) await f.after();
      }
    }
    return ops.map((o, j) => ({ name: o.name, impl: o.impl, function: o.function, runs: times[j] }));
  }

  globalThis.bench = Object.freeze({ loadModule, start, setup, samples, measure });
}

// Direct calls into the wallet module: the glue half of wasm/direct.go.
//
// Entering Go through a js.Func costs 10 to 30 µs in Chromium, more than a
// WebCrypto signature; an exported wasm function costs well under one. The
// module's hot calls (stamp, generateKey, hpkeSeal, sealOtp) are flows: Go
// steps between rounds of WebCrypto Promises. installDirect replaces their
// js.Func methods on globalThis.paywallet with functions that run each Go
// step through the module's exports, and chain the rounds here:
//
//   paywallet_call(m)   runs flow method m with the arguments in io[0]
//   paywallet_step(n)   runs step n with its round's value in io[0]
//   paywallet_fail(n)   ends step n, whose round rejected with io[0]
//
// Each returns -1 (io[1] is the result), -2 (io[1] is the Promise of the
// outcome), -3 (io[1] is the Error), -16 - n (the result is n bytes of
// ASCII JSON in scratch) or the number of the next step (io[1] is the
// Promise of its round). stamp, the hottest call, also passes its
// strings through scratch bytes in wasm memory (paywallet_stamp,
// paywallet_stamp_finish, paywallet_stamp_failed), and generateKey chains
// its two WebCrypto calls here and enters Go once (paywallet_keep,
// paywallet_keygen_failed), hpkeSeal its two rounds, entering Go before and
// after them (paywallet_seal_begin, paywallet_seal_finish,
// paywallet_seal_failed).
//
// Anything unusual (a wrong argument count or type) goes to the module's
// own js.Func method, so every error message comes from Go.

const RESOLVED = -1;
const PROMISED = -2;
const REJECTED = -3;
const JSON_RESULT = -16; // JSON_RESULT - n: the result is n bytes of JSON in scratch

/** The protocol of wasm/direct.go this glue speaks. */
export const DIRECT_PROTOCOL = 1;

/**
 * Installs the direct calls. Call it inside globalThis.paywalletReady(calls),
 * before the module freezes the wallet object.
 *
 * @param {WebAssembly.Exports} exports the module instance's exports
 * @param {object} wallet globalThis.paywallet, not yet frozen
 * @param {{io: any[], methods: string[], scratchSize: number, protocol: number}} calls
 *   what the module passed to paywalletReady
 * @returns {boolean} whether the direct calls are in place
 */
export function installDirect(exports, wallet, calls) {
  if (
    !calls ||
    calls.protocol !== DIRECT_PROTOCOL ||
    !Array.isArray(calls.io) ||
    !Array.isArray(calls.methods) ||
    !exports ||
    typeof exports.paywallet_call !== "function" ||
    !(exports.mem instanceof WebAssembly.Memory) ||
    !wallet ||
    Object.isFrozen(wallet)
  ) {
    return false;
  }
  const ex = exports;
  const io = calls.io;
  const scratchSize = calls.scratchSize;
  const scratchAt = ex.paywallet_scratch();

  // scratch is re-made when the module's memory grows (a new ArrayBuffer).
  let buffer = null;
  let bytes = null;
  const scratch = () => {
    if (ex.mem.buffer !== buffer) {
      buffer = ex.mem.buffer;
      bytes = new Uint8Array(buffer, scratchAt, scratchSize);
    }
    return bytes;
  };

  // take returns what Go handed back in io[1] and empties both slots, so
  // that io holds on to nothing between calls.
  const take = () => {
    const v = io[1];
    io[0] = undefined;
    io[1] = undefined;
    return v;
  };

  // ascii reads n bytes of scratch as a string of ASCII characters (a
  // TextDecoder is several times faster than String.fromCharCode here).
  const decoder = new TextDecoder();
  const ascii = (n) => decoder.decode(scratch().subarray(0, n));

  // outcome turns a step's code into its result, a Promise, or a throw.
  const outcome = (code) => {
    if (code <= JSON_RESULT) {
      io[0] = undefined;
      return JSON.parse(ascii(JSON_RESULT - code));
    }
    const v = take();
    if (code === RESOLVED || code === PROMISED) return v;
    if (code === REJECTED) throw v;
    return v.then(
      (value) => {
        io[0] = value;
        return outcome(ex.paywallet_step(code));
      },
      (reason) => {
        io[0] = reason;
        return outcome(ex.paywallet_fail(code));
      },
    );
  };

  const viaJSFunc = {};
  calls.methods.forEach((name, m) => {
    viaJSFunc[name] = wallet[name];
    wallet[name] = function (...args) {
      try {
        io[0] = args;
        return Promise.resolve(outcome(ex.paywallet_call(m)));
      } catch (err) {
        return Promise.reject(err);
      }
    };
  });

  if (typeof ex.paywallet_stamp === "function" && typeof viaJSFunc.stamp === "function") {
    const encoder = new TextEncoder();
    const slow = viaJSFunc.stamp;
    // A payload is encoded into one reused buffer when it fits: WebCrypto
    // copies its input when sign is called, and a fresh encode per stamp
    // costs more than the rest of the glue.
    const payloadBuffer = new Uint8Array(16 << 10);
    wallet.stamp = function (handle, payload) {
      if (arguments.length !== 2 || typeof handle !== "string" || typeof payload !== "string" || handle.length > scratchSize) {
        return slow.apply(this, arguments);
      }
      try {
        const h = encoder.encodeInto(handle, scratch());
        if (h.read !== handle.length) return slow.call(this, handle, payload);
        let data;
        if (payload.length * 3 <= payloadBuffer.length) {
          data = payloadBuffer.subarray(0, encoder.encodeInto(payload, payloadBuffer).written);
        } else {
          data = encoder.encode(payload);
        }
        io[0] = data;
        const key = ex.paywallet_stamp(h.written, data.length);
        if (key < 0) return Promise.reject(take());
        return take().then(
          (signature) => {
            const rs = new Uint8Array(signature);
            const n = rs.length <= scratchSize ? rs.length : 0;
            scratch().set(rs.subarray(0, n));
            const written = ex.paywallet_stamp_finish(key, n);
            if (written < 0) throw take();
            return ascii(written); // base64url
          },
          (reason) => {
            io[0] = reason;
            ex.paywallet_stamp_failed(key);
            throw take();
          },
        );
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  // generateKey: the two WebCrypto calls are chained here and Go is entered
  // once, with the private CryptoKey in io[0] and the raw public key in
  // scratch (paywallet_keep), rather than once per round. Only the plain
  // forms take this path; anything else gets the module's own checks.
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (typeof ex.paywallet_keep === "function" && typeof ex.paywallet_keygen_failed === "function" && typeof viaJSFunc.generateKey === "function" && subtle) {
    const slow = viaJSFunc.generateKey;
    const kinds = {
      signing: { alg: { name: "ECDSA", namedCurve: "P-256" }, usages: ["sign"], code: 0 },
      recipient: { alg: { name: "ECDH", namedCurve: "P-256" }, usages: ["deriveBits"], code: 1 },
    };
    const failed = (reason) => {
      io[0] = reason;
      ex.paywallet_keygen_failed();
      throw take();
    };
    wallet.generateKey = function (purpose) {
      const kind = purpose === undefined ? kinds.signing : Object.hasOwn(kinds, purpose) ? kinds[purpose] : null;
      if (arguments.length > 1 || kind === null) return slow.apply(this, arguments);
      try {
        return subtle.generateKey(kind.alg, false, kind.usages).then((pair) =>
          subtle.exportKey("raw", pair.publicKey).then((raw) => {
            const b = new Uint8Array(raw);
            const n = b.length <= scratchSize ? b.length : 0;
            scratch().set(b.subarray(0, n));
            io[0] = pair.privateKey;
            return outcome(ex.paywallet_keep(kind.code, n));
          }, failed),
        failed);
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  // hpkeSeal: Go checks the arguments and hands back the recipient's key
  // (paywallet_seal_begin), the two rounds of WebCrypto work are chained
  // here, and Go does the HPKE with the ephemeral key and the shared secret
  // put in scratch (paywallet_seal_finish, or paywallet_seal_failed).
  if (typeof ex.paywallet_seal_begin === "function" && typeof ex.paywallet_seal_finish === "function" && typeof ex.paywallet_seal_failed === "function" && typeof viaJSFunc.hpkeSeal === "function" && subtle) {
    const ecdh = { name: "ECDH", namedCurve: "P-256" };
    const deriveUsages = ["deriveBits"];
    const noUsages = [];
    wallet.hpkeSeal = function (...args) {
      try {
        io[0] = args;
        const id = ex.paywallet_seal_begin();
        if (id < 0) return Promise.resolve(outcome(id));
        io[0] = undefined;
        const failed = (reason) => {
          io[0] = reason;
          ex.paywallet_seal_failed(id);
          throw take();
        };
        const recipient = scratch().slice(0, 65);
        return Promise.all([subtle.generateKey(ecdh, false, deriveUsages), subtle.importKey("raw", recipient, ecdh, true, noUsages)]).then(
          ([pair, peer]) =>
            Promise.all([subtle.exportKey("raw", pair.publicKey), subtle.deriveBits({ name: "ECDH", public: peer }, pair.privateKey, 256)]).then(
              ([pub, bits]) => {
                const p = new Uint8Array(pub);
                const d = new Uint8Array(bits);
                const fits = p.length + d.length <= scratchSize;
                const s = scratch();
                if (fits) {
                  s.set(p, 0);
                  s.set(d, p.length);
                }
                d.fill(0); // the shared secret stays only in Go, which wipes scratch too
                return outcome(ex.paywallet_seal_finish(id, fits ? p.length : 0, fits ? d.length : 0));
              },
              failed,
            ),
          failed,
        );
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  wallet.calls = "direct";
  return true;
}

// The page's client of the browser wallet module (wasm/, built by `make
// wasm`), which runs in a dedicated Worker (wallet-worker.js) so that
// compiling and starting it never blocks the page:
//
//   import { loadWallet } from "/js/wallet.js";
//   const wallet = await loadWallet(config.wasmUrl);
//   const key = await wallet.generateKey();
//
// The client has the module's calls (wasm/doc.go), each returning a
// Promise, one message to the worker and one back per call; a rejection
// carries the module's own message ("stamp: unknown key handle"). The
// wallet's private keys are non-extractable WebCrypto keys that live in the
// worker (and, for the session's key, in the origin's IndexedDB); the page
// holds opaque handles only.
//
// The client is also globalThis.paywallet, as the module itself was when it
// ran on the page. A page that defines globalThis.paywallet before loading
// (a test's stand-in) gets that object back instead.

const DEFAULT_URL = "/wasm/wallet.wasm";
const DEFAULT_TIMEOUT_MS = 20000;
// A call the module has not answered in this long rejects: the person is
// told, instead of a button that waits for ever (a worker that died, an
// IndexedDB the browser holds blocked).
const CALL_TIMEOUT_MS = 30000;

let loading = null; // the Promise of the one load per page

/**
 * Starts the wallet module's worker once per page and resolves with the
 * client when the module reports it is ready. Later calls return the same
 * Promise; after a failure the next call tries again with a new worker.
 *
 * @param {string} [url] where wallet.wasm is served (application/wasm)
 * @param {{timeoutMs?: number, wasmExecUrl?: string, callTimeoutMs?: number}} [options]
 *   give up after timeoutMs (default 20 s); wasmExecUrl is the Go runtime's
 *   glue (default /wasm/wasm_exec.js, through the page's import map); a call
 *   not answered within callTimeoutMs rejects (default 30 s)
 * @returns {Promise<object>} the client
 */
export function loadWallet(url = DEFAULT_URL, options = {}) {
  if (!loading) {
    loading = load(url, options);
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

function fail(message, cause) {
  return new Error("loadWallet: " + message, cause === undefined ? undefined : { cause });
}

// resolve is import.meta.resolve where the browser has it: it applies the
// page's import map, which names the content-hashed files.
function resolve(specifier) {
  if (typeof import.meta.resolve === "function") return import.meta.resolve(specifier);
  return new URL(specifier, import.meta.url).href;
}

async function load(url, options) {
  if (globalThis.paywallet) return globalThis.paywallet;
  if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
    throw fail("this browser does not support WebAssembly");
  }
  if (typeof Worker !== "function") throw fail("this browser cannot run the wallet module in a Worker");
  if (typeof url !== "string" || url === "") throw fail("url must be a non-empty string");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;

  let worker;
  try {
    worker = new Worker(resolve("./wallet-worker.js"), { type: "module", name: "wallet" });
  } catch (err) {
    throw fail("cannot start the wallet's worker: " + err.message, err);
  }
  const pending = new Map(); // call id -> {resolve, reject, timer}
  let next = 0;
  let broken = null; // the Error every call gets once the worker has failed
  let running = false; // the worker has said the module is ready

  const breakAll = (err) => {
    broken = err;
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    pending.clear();
  };

  const started = new Promise((resolveReady, rejectReady) => {
    const timer = setTimeout(() => {
      const err = fail(`the wallet module did not start within ${timeoutMs} ms`);
      breakAll(err);
      worker.terminate();
      rejectReady(err);
    }, timeoutMs + 1000); // the worker's own timeout says more; this one is for a worker that never answers
    worker.onmessage = (event) => {
      const m = event.data;
      if (!m || typeof m !== "object") return;
      if (typeof m.id === "number") {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        clearTimeout(p.timer);
        if (m.ok) p.resolve(m.value);
        else p.reject(remoteError(m));
        return;
      }
      if (m.type === "ready") {
        clearTimeout(timer);
        running = true;
        resolveReady(m);
      } else if (m.type === "failed") {
        clearTimeout(timer);
        const err = new Error(String(m.message));
        breakAll(err);
        worker.terminate();
        rejectReady(err);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (running) {
        // An error nothing caught in the worker once the module runs (the
        // module's own calls answer theirs): the worker goes on, and so do
        // the calls; their timeouts cover one that never answers.
        console.error("wallet module: an uncaught error in its worker:", event.message);
        return;
      }
      // The worker's script or an import of it did not load or run.
      clearTimeout(timer);
      const err = fail("the wallet's worker failed: " + (event.message || "its script did not load"));
      breakAll(err);
      worker.terminate();
      rejectReady(err);
    };
    worker.onmessageerror = () => {
      console.error("wallet module: a message from its worker could not be read");
    };
  });

  worker.postMessage({
    type: "load",
    wasmUrl: new URL(url, location.href).href,
    wasmExecUrl: options.wasmExecUrl ? new URL(options.wasmExecUrl, location.href).href : resolve("/wasm/wasm_exec.js"),
    directUrl: resolve("./direct.js"),
    timeoutMs,
  });

  const { methods, version } = await started;
  const call = (method, args) =>
    new Promise((resolveCall, rejectCall) => {
      if (broken) return rejectCall(broken);
      const id = ++next;
      const timer = setTimeout(() => {
        if (!pending.delete(id)) return;
        rejectCall(new Error(method + ": the wallet module did not answer within " + callTimeoutMs / 1000 + " s"));
      }, callTimeoutMs);
      pending.set(id, { resolve: resolveCall, reject: rejectCall, timer });
      try {
        worker.postMessage({ id, method, args });
      } catch (err) {
        // An argument that cannot be cloned (a function, a DOM node).
        pending.delete(id);
        clearTimeout(timer);
        rejectCall(new TypeError(method + ": " + err.message));
      }
    });
  const client = { version };
  for (const method of Array.isArray(methods) ? methods : []) {
    client[method] = (...args) => call(method, args);
  }
  if (typeof client.stamp !== "function") throw fail("the wallet module started but has no stamp call");
  Object.freeze(client);
  if (!globalThis.paywallet) globalThis.paywallet = client;
  return client;
}

// remoteError rebuilds the module's Error on this side, message and name.
function remoteError(m) {
  const Kind = { TypeError, RangeError, SyntaxError }[m.name] || Error;
  const err = new Kind(String(m.message));
  if (Kind === Error && typeof m.name === "string" && m.name !== "Error") err.name = m.name;
  return err;
}

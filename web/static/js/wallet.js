// Loader for the browser wallet module (wasm/, built by `make wasm`).
//
// wasm_exec.js is a classic script that defines globalThis.Go, so the page
// includes it before this module:
//
//   <script src="/wasm/wasm_exec.js"></script>
//   <script type="module">
//     import { loadWallet } from "/js/wallet.js";
//     const wallet = await loadWallet("/wasm/wallet.wasm");
//     const key = await wallet.generateKey();
//   </script>
//
// The wallet's private keys are non-extractable WebCrypto keys that the
// module creates and uses; the page holds opaque handles only, and the
// session's key is kept in IndexedDB (storeSession, resumeSession,
// deleteSession); see wasm/doc.go for the API and the trust boundary.

import { installDirect } from "./direct.js";

const DEFAULT_URL = "/wasm/wallet.wasm";
const DEFAULT_TIMEOUT_MS = 20000;

let loading = null; // the Promise of the one load per page

/**
 * Loads and starts the wallet module once per page and resolves with
 * globalThis.paywallet when the module reports it is ready. Later calls
 * return the same Promise; after a failure the next call tries again.
 *
 * @param {string} [url] where wallet.wasm is served (application/wasm)
 * @param {{timeoutMs?: number}} [options] give up after this long (default 20 s)
 * @returns {Promise<object>} the paywallet object
 */
export async function loadWallet(url = DEFAULT_URL, options = {}) {
  if (!loading) {
    loading = load(url, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

function fail(message, cause) {
  return new Error("loadWallet: " + message, cause === undefined ? undefined : { cause });
}

async function load(url, timeoutMs) {
  if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
    throw fail("this browser does not support WebAssembly");
  }
  if (typeof globalThis.Go !== "function") {
    throw fail(
      "the Go runtime is missing: include <script src=\"/wasm/wasm_exec.js\"></script> " +
        "before loading this module",
    );
  }
  if (globalThis.paywallet) {
    return globalThis.paywallet; // already running (loaded by another copy of this script)
  }
  if (typeof url !== "string" || url === "") {
    throw fail("url must be a non-empty string");
  }

  const abort = new AbortController();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(fail(`the wallet module did not start within ${timeoutMs} ms`));
    }, timeoutMs);
  });

  // main() calls paywalletReady synchronously from go.run, so install it
  // first. It is also where the direct calls go in (direct.js), before the
  // module freezes globalThis.paywallet; if they cannot, the module's own
  // js.Func methods do the same work, slower.
  const previousReady = globalThis.paywalletReady;
  let markReady;
  let instance;
  const ready = new Promise((resolve) => {
    markReady = resolve;
  });
  globalThis.paywalletReady = (calls) => {
    try {
      installDirect(instance && instance.exports, globalThis.paywallet, calls);
    } catch (err) {
      console.warn("loadWallet: the direct calls are not installed:", err);
    }
    markReady(globalThis.paywallet);
    if (typeof previousReady === "function") previousReady();
  };

  const start = async () => {
    let response;
    try {
      response = await fetch(url, { credentials: "same-origin", signal: abort.signal });
    } catch (err) {
      throw fail(`cannot fetch ${url}: ${err.message}`, err);
    }
    if (!response.ok) {
      throw fail(`cannot fetch ${url}: HTTP ${response.status}`);
    }
    const go = new globalThis.Go();
    try {
      if (typeof WebAssembly.instantiateStreaming === "function") {
        ({ instance } = await WebAssembly.instantiateStreaming(response, go.importObject));
      } else {
        ({ instance } = await WebAssembly.instantiate(await response.arrayBuffer(), go.importObject));
      }
    } catch (err) {
      // A wrong Content-Type (must be application/wasm) or a wasm_exec.js
      // from another Go version ends up here.
      throw fail(`cannot instantiate ${url}: ${err.message}`, err);
    }
    // go.run settles only when the Go program exits, which the wallet never
    // does while it works; reaching either branch before ready is a failure.
    const exited = go.run(instance).then(
      () => {
        throw fail("the wallet module exited before it was ready");
      },
      (err) => {
        throw fail(`the wallet module crashed: ${err.message}`, err);
      },
    );
    return Promise.race([ready, exited]);
  };

  const started = start();
  started.catch(() => {}); // reported through the race below, or moot after a timeout
  try {
    const wallet = await Promise.race([started, timeout]);
    if (!wallet || typeof wallet.stamp !== "function") {
      throw fail("the wallet module started but globalThis.paywallet is missing");
    }
    return wallet;
  } finally {
    clearTimeout(timer);
    if (previousReady === undefined) {
      delete globalThis.paywalletReady;
    } else {
      globalThis.paywalletReady = previousReady;
    }
  }
}

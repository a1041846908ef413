// The wallet module's home: a dedicated module Worker, so that compiling
// and starting the 3.7 MB Go module never blocks the page's main thread.
//
// The page talks to it through wallet.js, one message per call:
//
//   page -> worker  {type: "load", wasmUrl, wasmExecUrl, directUrl, timeoutMs}
//                   once; the worker imports the Go runtime (wasm_exec.js)
//                   and the direct-call glue (direct.js), fetches the module
//                   at low priority and starts it
//   worker -> page  {type: "ready", methods, version}, or
//                   {type: "failed", message}
//   page -> worker  {id, method, args}
//   worker -> page  {id, ok: true, value} or {id, ok: false, message, name}
//
// The URLs come from the page (import.meta.resolve there applies the page's
// import map, which a worker does not have), so the worker fetches the same
// content-hashed, immutable files the page would.
//
// Everything the module does is unchanged here: a Worker has crypto.subtle,
// IndexedDB (the same origin's, shared with the page and the other tabs),
// setTimeout and structured clone. Its non-extractable CryptoKeys never
// leave this worker; the page holds the same opaque handles as before.

let loading = null; // the Promise of the one load

self.onmessage = (event) => {
  const m = event.data;
  if (!m || typeof m !== "object") return;
  if (m.type === "load") {
    if (!loading) {
      loading = load(m).then(
        (wallet) => {
          const methods = Object.keys(wallet).filter((k) => typeof wallet[k] === "function");
          self.postMessage({ type: "ready", methods, version: typeof wallet.version === "string" ? wallet.version : "" });
          return wallet;
        },
        (err) => {
          self.postMessage({ type: "failed", message: messageOf(err) });
          throw err;
        },
      );
      loading.catch(() => {});
    }
    return;
  }
  if (typeof m.id === "number") call(m);
};

// call runs one method of the module and answers with its outcome. A
// method that is not the module's is refused as the module would refuse
// an unknown call, by name.
async function call({ id, method, args }) {
  try {
    if (!loading) throw new Error(method + ": the wallet module is not loaded");
    const wallet = await loading;
    const fn = typeof method === "string" && Object.hasOwn(wallet, method) ? wallet[method] : undefined;
    if (typeof fn !== "function") throw new Error(String(method) + ": no such call in the wallet module");
    const value = await fn.apply(wallet, Array.isArray(args) ? args : []);
    self.postMessage({ id, ok: true, value });
  } catch (err) {
    self.postMessage({ id, ok: false, message: messageOf(err), name: err && typeof err.name === "string" ? err.name : "Error" });
  }
}

function messageOf(err) {
  if (err && typeof err.message === "string") return err.message;
  return String(err);
}

function fail(message, cause) {
  return new Error("loadWallet: " + message, cause === undefined ? undefined : { cause });
}

async function load({ wasmUrl, wasmExecUrl, directUrl, timeoutMs }) {
  if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
    throw fail("this browser does not support WebAssembly");
  }
  for (const [name, url] of [
    ["wasmUrl", wasmUrl],
    ["wasmExecUrl", wasmExecUrl],
    ["directUrl", directUrl],
  ]) {
    if (typeof url !== "string" || url === "") throw fail(name + " must be a non-empty string");
  }
  let installDirect;
  try {
    // wasm_exec.js is a script that defines globalThis.Go; imported as a
    // module it runs the same way (it is strict code already).
    await import(wasmExecUrl);
    ({ installDirect } = await import(directUrl));
  } catch (err) {
    throw fail("cannot load the Go runtime: " + messageOf(err), err);
  }
  if (typeof globalThis.Go !== "function") throw fail("the Go runtime (" + wasmExecUrl + ") did not define Go");

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
  };

  const start = async () => {
    let response;
    try {
      // Low priority: the page's own requests (its data) go first.
      response = await fetch(wasmUrl, { credentials: "same-origin", signal: abort.signal, priority: "low" });
    } catch (err) {
      throw fail(`cannot fetch ${wasmUrl}: ${err.message}`, err);
    }
    if (!response.ok) throw fail(`cannot fetch ${wasmUrl}: HTTP ${response.status}`);
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
      throw fail(`cannot instantiate ${wasmUrl}: ${err.message}`, err);
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
    delete globalThis.paywalletReady;
  }
}

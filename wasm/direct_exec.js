// go test -exec for ./wasm/ under GOOS=js: runs the test binary as Go's
// lib/wasm/wasm_exec_node.js does, and also hands the wallet page's
// direct-call glue (web/static/js/direct.js) to the tests, with the
// module's exports, so that the hot calls run through the page's own path
// (wasm/direct.go). `make wasm-test` runs the tests both ways.
//
//   GOOS=js GOARCH=wasm go test -exec "node $PWD/wasm/direct_exec.js" ./wasm/
"use strict";

const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const url = require("url");

if (process.argv.length < 3) {
  console.error("usage: direct_exec.js [wasm binary] [arguments]");
  process.exit(1);
}

globalThis.require = require;
globalThis.fs = fs;
globalThis.path = path;
globalThis.TextEncoder ??= require("util").TextEncoder;
globalThis.TextDecoder ??= require("util").TextDecoder;
globalThis.performance ??= require("perf_hooks").performance;
globalThis.crypto ??= require("crypto").webcrypto;

const goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
require(path.join(goroot, "lib", "wasm", "wasm_exec.js"));

(async () => {
  // The glue is an ES module; Node loads a .js file as CommonJS unless a
  // package.json says otherwise, so it is imported from a .mjs copy.
  const glue = path.join(__dirname, "..", "web", "static", "js", "direct.js");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "paywallet-direct-"));
  const copy = path.join(tmp, "direct.mjs");
  fs.copyFileSync(glue, copy);
  const { installDirect } = await import(url.pathToFileURL(copy).href);
  fs.rmSync(tmp, { recursive: true, force: true });

  const go = new Go();
  go.argv = process.argv.slice(2);
  go.env = Object.assign({ TMPDIR: os.tmpdir() }, process.env);
  go.exit = process.exit;
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(process.argv[2]), go.importObject);
  // The tests' TestMain calls this from its own paywalletReady.
  globalThis.paywalletTestDirect = (calls) => installDirect(instance.exports, globalThis.paywallet, calls);
  process.on("exit", (code) => {
    if (code === 0 && !go.exited) {
      // deadlock: make Go print the error and the stacks
      go._pendingEvent = { id: 0 };
      go._resume();
    }
  });
  await go.run(instance);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});

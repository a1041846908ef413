// Makes the wallet page's direct-call glue (web/static/js/direct.js)
// reachable from bench.js, a classic script: bench.loadWasm installs it as
// the wallet's loader does.
import { installDirect } from "/direct.js";

globalThis.installDirect = installDirect;

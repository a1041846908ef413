// The wallet's addresses: each view has its own URL, moved between with the
// History API, so that back and forward, a reload and a shared link work as
// people expect of any web page.
//
// The table of views is the same as the server's (web/routes.go, checked
// against this file by TestRoutesAgree): the server answers every view's
// address with index.html, and any other page address with index.html and
// status 404, shown as the "notfound" view.
//
//   /                        home
//   /send                    send
//   /activity                activity
//   /activity/statement      statement
//   /activity/{id}           payment
//   /activity/{id}/receipt   receipt
//   /recipients              recipients
//   /recipients/new          recipient-new
//   /recipients/{id}         recipient
//   /security                security
//
// app.js owns what a view shows; this module only reads addresses, changes
// them, and tells app.js (onRoute) when the address changed. Links to a
// view's address are followed here without a page load: the document
// listens for clicks on same-origin <a href> elements.

// An id in an address: letters, digits, ':', '-' and '_' (the service's
// "Transaction:019…" ids), at most 100 characters, like routes.go.
const ID = /^[A-Za-z0-9:_-]{1,100}$/;

/**
 * The view at a URL path, or null when the path is not one of them.
 *
 * @param {string} path a URL path such as "/activity/Transaction:019…"
 * @returns {{name: string, id: string, path: string} | null}
 */
export function routeOf(path) {
  if (path === "/") return { name: "home", id: "", path };
  if (typeof path !== "string" || !path.startsWith("/") || path.endsWith("/")) return null;
  const seg = [];
  for (const raw of path.slice(1).split("/")) {
    let s;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (!ID.test(s)) return null;
    seg.push(s);
  }
  const [a, b, c] = seg;
  const route = (name, id = "") => ({ name, id, path });
  if (seg.length === 1 && a === "send") return route("send");
  if (seg.length === 1 && a === "activity") return route("activity");
  if (seg.length === 2 && a === "activity" && b === "statement") return route("statement");
  if (seg.length === 2 && a === "activity") return route("payment", b);
  if (seg.length === 3 && a === "activity" && c === "receipt") return route("receipt", b);
  if (seg.length === 1 && a === "recipients") return route("recipients");
  if (seg.length === 2 && a === "recipients" && b === "new") return route("recipient-new");
  if (seg.length === 2 && a === "recipients") return route("recipient", b);
  if (seg.length === 1 && a === "security") return route("security");
  return null;
}

// segment writes an id into an address: as it is when it is id-like (a
// ':' is fine in a path, and "/activity/Transaction:019…" reads better
// than "%3A"), escaped otherwise.
const segment = (id) => (ID.test(String(id)) ? String(id) : encodeURIComponent(id));

/** The address of a payment's view, of its receipt, of a recipient, of the statement. */
export const paths = {
  statement: "/activity/statement",
  payment: (id) => "/activity/" + segment(id),
  receipt: (id) => "/activity/" + segment(id) + "/receipt",
  recipient: (id) => "/recipients/" + segment(id),
};

let listener = () => {};

/**
 * Starts following the address: fn(route, {pop}) runs for every change of
 * view (route null for an address that is no view; pop when the change came
 * from back or forward, where the browser restores the scroll position).
 */
export function onRoute(fn) {
  listener = fn;
  window.addEventListener("popstate", () => listener(current(), { pop: true }));
  document.addEventListener("click", onClick);
}

/** The route of the address the page is at now. */
export function current() {
  return routeOf(location.pathname);
}

/**
 * Goes to path: a new history entry (or the current one replaced) and the
 * view shown. A path equal to the current address only shows it again.
 *
 * @param {string} path
 * @param {{replace?: boolean, state?: object}} options state travels with the
 *   entry (e.g. {sent: true} after a payment was sent)
 */
export function navigate(path, { replace = false, state = null } = {}) {
  const same = path === location.pathname;
  if (replace || same) history.replaceState(state, "", path);
  else history.pushState(state, "", path);
  listener(current(), { pop: false, state });
}

// onClick follows a plain click on a link to one of the views without
// loading the page again. A click with a modifier (new tab, new window,
// download), a link with a target or download attribute, or one leaving
// the site is left to the browser.
function onClick(event) {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.search || url.hash) return;
  if (!routeOf(url.pathname)) return;
  event.preventDefault();
  navigate(url.pathname);
}

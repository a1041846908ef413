// The wallet's addresses: each view has its own URL, moved between with the
// History API, so that back and forward, a reload and a shared link work as
// people expect of any web page.
//
// The table of views is views.js, read here and by the server
// (web/routes.go): the server answers every view's address with index.html,
// and any other page address with index.html and status 404, shown as the
// "notfound" view. Each entry is {name, path, title, nav}: the path is a
// pattern whose {id} is one path segment, a resource id such as
// "Transaction:019…"; the first entry whose pattern matches names the view.
//
// app.js owns which view is shown; this module only reads addresses, changes
// them, and tells app.js (onRoute) when the address changed. Links to a
// view's address are followed here without a page load: the document
// listens for clicks on same-origin <a href> elements.

import views from "./views.js";

export { views };

// An id in an address: letters, digits, ':', '-' and '_' (the service's
// "Transaction:019…" ids), at most 100 characters, like routes.go.
const ID = /^[A-Za-z0-9:_-]{1,100}$/;

// The table's patterns, split into segments once.
const patterns = views.map((v) => ({ name: v.name, seg: v.path === "/" ? [] : v.path.slice(1).split("/") }));

/**
 * The view at a URL path, or null when the path is not one of them.
 *
 * @param {string} path a URL path such as "/activity/Transaction:019…"
 * @returns {{name: string, id: string, path: string} | null}
 */
export function routeOf(path) {
  if (typeof path !== "string" || !path.startsWith("/") || (path.endsWith("/") && path !== "/")) return null;
  const seg = [];
  for (const raw of path === "/" ? [] : path.slice(1).split("/")) {
    let s;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (!ID.test(s)) return null;
    seg.push(s);
  }
  for (const p of patterns) {
    if (p.seg.length !== seg.length) continue;
    let id = "";
    if (p.seg.every((want, i) => (want === "{id}" ? ((id = seg[i]), true) : want === seg[i]))) return { name: p.name, id, path };
  }
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
// shownPath is the address of the view last shown: back, forward or a link
// to a fragment (the skip link) that stays on it is no move of the person's.
let shownPath = location.pathname;

/**
 * Starts following the address: fn(route, {pop, person}) runs for every
 * change of view (route null for an address that is no view; pop when the
 * change came from back or forward, where the browser restores the scroll
 * position; person when the person moved, by a link or back and forward,
 * rather than the page after an action).
 */
export function onRoute(fn) {
  listener = fn;
  window.addEventListener("popstate", () => {
    const person = location.pathname !== shownPath;
    shownPath = location.pathname;
    listener(current(), { pop: true, person });
  });
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
  go(path, { replace, state, person: false });
}

function go(path, { replace, state, person }) {
  const same = path === location.pathname;
  if (replace || same) history.replaceState(state, "", path);
  else history.pushState(state, "", path);
  const moved = location.pathname !== shownPath;
  shownPath = location.pathname;
  listener(current(), { pop: false, state, person: person && moved });
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
  go(url.pathname, { replace: false, state: null, person: true });
}

// File downloads made in the page: a statement month as CSV, the security
// log as JSON.

/**
 * Hands text to the browser as a file download named name.
 *
 * @param {string} text
 * @param {string} name
 * @param {string} type the file's media type, e.g. "text/csv;charset=utf-8"
 */
export function saveFile(text, name, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // Some browsers read the Blob after click() returns: let it live a while.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

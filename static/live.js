/* heatweb pages: live refresh of elements in progress, and small conveniences.
 *
 * Every element with data-live-src is refetched about once a second and
 * replaced by the element with the same id in the HTML the server returns.
 * The server leaves data-live-src off once nothing is in progress any more,
 * so polling stops by itself. Elements sharing a data-live-src share a fetch.
 * A live region (aria-live) inside keeps its node and only its content
 * changes: screen readers announce changes of a region they already know,
 * not a new node. The focused element is focused again after a refresh.
 */
(function () {
  "use strict";
  var PERIOD_MS = 1000;
  var TIMEOUT_MS = 10000;

  // The child of parent that is, or holds, node.
  function childHolding(parent, node) {
    while (node.parentNode !== parent) { node = node.parentNode; }
    return node;
  }

  // el becomes fresh; a live region in it keeps its node (never detached), with fresh's
  // content. Around the children holding regions, fresh's other children take the place
  // of el's.
  function morph(el, fresh) {
    if (el.hasAttribute("aria-live")) {
      if (el.innerHTML !== fresh.innerHTML) { el.innerHTML = fresh.innerHTML; }
      return;
    }
    var regions = Array.from(el.querySelectorAll("[aria-live][id]"));
    if (el.tagName !== fresh.tagName || !regions.length) { el.replaceWith(fresh); return; }
    Array.from(el.attributes).forEach(function (attr) {
      if (!fresh.hasAttribute(attr.name)) { el.removeAttribute(attr.name); }
    });
    Array.from(fresh.attributes).forEach(function (attr) { el.setAttribute(attr.name, attr.value); });
    var kept = new Map();  // fresh's child -> el's child holding the same region
    regions.forEach(function (region) {
      var twin = fresh.querySelector("#" + CSS.escape(region.id));
      if (twin) { kept.set(childHolding(fresh, twin), childHolding(el, region)); }
    });
    var keeping = new Set(kept.values());
    Array.from(el.childNodes).forEach(function (child) {
      if (!keeping.has(child)) { child.remove(); }
    });
    var next = el.firstChild;
    Array.from(fresh.childNodes).forEach(function (child) {
      var old = kept.get(child);
      if (old) {
        next = old.nextSibling;
        morph(old, child);
      } else {
        el.insertBefore(child, next);
      }
    });
  }

  // A box that scrolls sideways (data-scroll-cue: the cue's id) shows its cue while it does.
  function markScrolling() {
    document.querySelectorAll("[data-scroll-cue]").forEach(function (box) {
      var cue = document.getElementById(box.getAttribute("data-scroll-cue"));
      if (cue) { cue.hidden = box.scrollWidth <= box.clientWidth; }
    });
  }

  // A text over the server's budget (data-max-bytes) is refused before it is sent, at its
  // field, in the server's words (data-size-refusal, "{size}" standing for its size).
  function sizeRefusal(field) {
    var size;
    if (field.type === "file") {
      size = field.files.length ? field.files[0].size : 0;
    } else {  // as the form sends it: line ends as CR LF, UTF-8
      size = new TextEncoder().encode(field.value.replace(/\r?\n/g, "\r\n")).length;
    }
    if (size <= Number(field.getAttribute("data-max-bytes"))) { return ""; }
    return field.getAttribute("data-size-refusal").replace("{size}", String(size));
  }

  function showSizeRefusal(field, message) {
    var box = field.closest(".field") || field.parentNode;
    var shown = document.getElementById(field.id + "-size-error");
    if (shown) { shown.remove(); }
    box.classList.toggle("has-error", Boolean(message));
    if (!message) { field.removeAttribute("aria-invalid"); return; }
    var error = document.createElement("p");
    error.className = "field-error";
    error.id = field.id + "-size-error";
    error.setAttribute("role", "alert");
    error.textContent = message;
    box.appendChild(error);
    field.setAttribute("aria-invalid", "true");
  }

  function checkSizes(event) {
    var refused = null;
    event.target.querySelectorAll("[data-max-bytes]").forEach(function (field) {
      var message = sizeRefusal(field);
      showSizeRefusal(field, message);
      if (message && !refused) { refused = field; }
    });
    if (refused) {
      event.preventDefault();
      refused.focus();
    }
  }

  function refresh() {
    var groups = {};
    document.querySelectorAll("[data-live-src]").forEach(function (el) {
      var src = el.getAttribute("data-live-src");
      (groups[src] = groups[src] || []).push(el);
    });
    var fetches = Object.keys(groups).map(function (src) {
      var abort = new AbortController();
      var timer = setTimeout(function () { abort.abort(); }, TIMEOUT_MS);
      return fetch(src, {credentials: "same-origin", signal: abort.signal,
                         headers: {"X-Requested-With": "fetch"}})
        .then(function (response) {
          if (!response.ok) { throw new Error("HTTP " + response.status); }
          return response.text();
        })
        .then(function (html) {
          var holder = document.createElement("template");
          holder.innerHTML = html;
          groups[src].forEach(function (el) {
            var fresh = holder.content.getElementById(el.id);
            if (fresh) {
              // A row's fleet checkbox keeps what the user ticked across refreshes.
              el.querySelectorAll("input[type=checkbox][id]").forEach(function (box) {
                var twin = fresh.querySelector("#" + CSS.escape(box.id));
                if (twin) { twin.checked = box.checked; }
              });
              var focused = el.contains(document.activeElement) && document.activeElement.id;
              morph(el, fresh);
              if (focused && document.activeElement !== document.getElementById(focused)) {
                var again = document.getElementById(focused);
                if (again) { again.focus({preventScroll: true}); }
              }
            }
          });
        })
        .catch(function () { /* try again on the next tick */ })
        .then(function () { clearTimeout(timer); });
    });
    Promise.all(fetches).then(function () {
      markScrolling();
      setTimeout(refresh, PERIOD_MS);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.documentElement.classList.add("js");
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
    // A refused button (aria-disabled) stays focusable so its reason can be read; it does nothing.
    document.addEventListener("click", function (event) {
      if (event.target.closest("[aria-disabled=true]")) { event.preventDefault(); }
    }, true);
    // "Copy JSON": the text of the element named by data-copy goes to the clipboard.
    document.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-copy]");
      var source = button && document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
      });
    });
    document.addEventListener("submit", checkSizes);
    markScrolling();
    window.addEventListener("resize", markScrolling);
    setTimeout(refresh, PERIOD_MS);
  });
})();

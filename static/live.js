/* heatweb pages: live refresh of elements in progress, and small conveniences.
 *
 * Every element with data-live-src is refetched about once a second and
 * replaced by the element with the same id in the HTML the server returns.
 * The server leaves data-live-src off once nothing is in progress any more,
 * so polling stops by itself. Elements sharing a data-live-src share a fetch.
 */
(function () {
  "use strict";
  var PERIOD_MS = 1000;
  var TIMEOUT_MS = 10000;

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
              el.replaceWith(fresh);
            }
          });
        })
        .catch(function () { /* try again on the next tick */ })
        .then(function () { clearTimeout(timer); });
    });
    Promise.all(fetches).then(function () { setTimeout(refresh, PERIOD_MS); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.documentElement.classList.add("js");
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
    setTimeout(refresh, PERIOD_MS);
  });
})();

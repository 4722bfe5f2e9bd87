// Optional enhancement: type-ahead for the search box over names and aliases. Pages work
// without it; every change goes through plain forms that carry the CSRF token.
(function () {
  "use strict";
  var box = document.querySelector("input[data-typeahead]");
  if (!box || !window.fetch) return;
  var list = document.getElementById(box.getAttribute("list"));
  var timer = null;
  box.addEventListener("input", function () {
    clearTimeout(timer);
    var q = box.value.trim();
    if (q.length < 2) return;
    timer = setTimeout(function () {
      fetch("/api/beliefs?prefix=true&limit=8&q=" + encodeURIComponent(q), {
        headers: { "Accept": "application/json" }, credentials: "same-origin"
      }).then(function (r) { return r.ok ? r.json() : []; }).then(function (items) {
        list.textContent = "";
        items.forEach(function (b) {
          var option = document.createElement("option");
          option.value = b.match ? b.match.term : b.canonical_name;  // text, never markup
          option.label = b.canonical_name;
          list.appendChild(option);
        });
      }).catch(function () {});
    }, 150);
  });
})();

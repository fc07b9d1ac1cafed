// Sorting and filtering of the cases table: each case is a <tbody> (its row and its runs), moved
// whole, keyed by its data-* attributes.
(function () {
  var table = document.getElementById("cases");
  if (!table) return;
  var heads = table.querySelectorAll("th[data-sort]");
  function value(body, key) {
    return key === "id" ? body.dataset.id : parseFloat(body.dataset[key]);
  }
  heads.forEach(function (head) {
    head.addEventListener("click", function () {
      var key = head.dataset.sort;
      var ascending = head.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var bodies = Array.prototype.slice.call(table.tBodies);
      bodies.sort(function (a, b) {
        var x = value(a, key), y = value(b, key);
        var order = key === "id" ? (x < y ? -1 : x > y ? 1 : 0) : x - y;
        return ascending ? order : -order;
      });
      bodies.forEach(function (body) { table.appendChild(body); });
    });
  });
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  filter.addEventListener("input", function () {
    var query = filter.value.trim().toLowerCase();
    var count = 0;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var hit = body.dataset.search.indexOf(query) >= 0;
      body.hidden = !hit;
      if (hit) count++;
    });
    shown.textContent = count;
  });
})();

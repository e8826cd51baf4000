// Progressive enhancement only: the page reads the same without it. Shows an op's
// source line as a styled tooltip (instead of the SVG <title>'s plain one) and marks
// the op whose source line was opened.
(function () {
  "use strict";
  var tooltip = document.getElementById("tooltip");
  var ops = document.querySelectorAll("a.op");
  function show(op, event) {
    if (!op.dataset.tip) { return; }
    tooltip.textContent = op.dataset.tip;
    tooltip.hidden = false;
    var x = Math.min(event.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
    var y = event.clientY + 18;
    if (y + tooltip.offsetHeight > window.innerHeight) { y = event.clientY - tooltip.offsetHeight - 12; }
    tooltip.style.left = x + "px";
    tooltip.style.top = y + "px";
  }
  Array.prototype.forEach.call(ops, function (op) {
    // The native tooltip of the <title> would show on top of this one: it moves into
    // a data attribute.
    var title = op.querySelector("title");
    if (title) {
      op.dataset.tip = title.textContent;
      title.parentNode.removeChild(title);
    }
    op.addEventListener("mousemove", function (event) { show(op, event); });
    op.addEventListener("mouseleave", function () { tooltip.hidden = true; });
    op.addEventListener("click", function () {
      Array.prototype.forEach.call(document.querySelectorAll("a.op.selected"), function (other) {
        other.classList.remove("selected");
      });
      op.classList.add("selected");
    });
  });
  // A timeline wider than the page opens scrolled to show the finding's ops, from the
  // first as far as the page allows.
  Array.prototype.forEach.call(document.querySelectorAll(".timeline-grid .scroll"), function (scroll) {
    var boxes = scroll.querySelectorAll("a.op-cycle rect, a.op-involved rect");
    if (boxes.length === 0) { return; }
    var left = Infinity, right = 0;
    Array.prototype.forEach.call(boxes, function (box) {
      var x = parseFloat(box.getAttribute("x"));
      left = Math.min(left, x);
      right = Math.max(right, x + parseFloat(box.getAttribute("width")));
    });
    if (right + 40 > scroll.clientWidth) {
      scroll.scrollLeft = Math.max(0, Math.min(left - 90, right + 40 - scroll.clientWidth));
    }
  });
  // A page of many findings: filters, search and collapsible cards.
  var finder = document.getElementById("finder");
  var cards = Array.prototype.slice.call(document.querySelectorAll("section.finding"));
  Array.prototype.forEach.call(cards, function (card) {
    var heading = card.querySelector("h2");
    heading.setAttribute("role", "button");
    heading.setAttribute("tabindex", "0");
    heading.setAttribute("aria-expanded", "true");
    function toggle() {
      var collapsed = card.classList.toggle("collapsed");
      heading.setAttribute("aria-expanded", collapsed ? "false" : "true");
    }
    heading.addEventListener("click", toggle);
    heading.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(); }
    });
  });
  if (!finder) { return; }
  finder.hidden = false;
  var text = document.getElementById("finder-text");
  var rule = document.getElementById("finder-rule");
  var severity = document.getElementById("finder-severity");
  var file = document.getElementById("finder-file");
  var count = document.getElementById("finder-count");
  function apply() {
    var words = text.value.toLowerCase().split(/\s+/).filter(function (w) { return w; });
    var shown = 0;
    cards.forEach(function (card) {
      var code = card.dataset.code;
      var matches = (!rule.value || rule.value.split(" ")[0] === code) &&
        (!severity.value || severity.value === card.dataset.severity) &&
        (!file.value || file.value === card.dataset.file) &&
        words.every(function (word) { return card.textContent.toLowerCase().indexOf(word) >= 0; });
      card.hidden = !matches;
      if (matches) { shown += 1; }
    });
    count.textContent = shown + " of " + cards.length + " findings shown";
  }
  [text, rule, severity, file].forEach(function (control) {
    control.addEventListener("input", apply);
    control.addEventListener("change", apply);
  });
  document.getElementById("finder-collapse").addEventListener("click", function () {
    cards.forEach(function (card) { card.classList.add("collapsed"); card.querySelector("h2").setAttribute("aria-expanded", "false"); });
  });
  document.getElementById("finder-expand").addEventListener("click", function () {
    cards.forEach(function (card) { card.classList.remove("collapsed"); card.querySelector("h2").setAttribute("aria-expanded", "true"); });
  });
  apply();
})();

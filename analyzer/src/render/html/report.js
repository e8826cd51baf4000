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
})();

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
  // first as far as the page allows, and where the ghosts into them come from.
  Array.prototype.forEach.call(document.querySelectorAll(".timeline-grid .scroll"), function (scroll) {
    var boxes = scroll.querySelectorAll("a.op-cycle rect, a.op-involved rect");
    if (boxes.length === 0) { return; }
    var left = Infinity, right = 0;
    Array.prototype.forEach.call(boxes, function (box) {
      var x = parseFloat(box.getAttribute("x"));
      left = Math.min(left, x);
      right = Math.max(right, x + parseFloat(box.getAttribute("width")));
    });
    Array.prototype.forEach.call(scroll.querySelectorAll(".ghost-line"), function (ghost) {
      left = Math.min(left, ghost.getBBox().x + 90);
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
  var group = document.getElementById("finder-group");
  var count = document.getElementById("finder-count");
  // The group headers shown, each with its cards (`header.cards`).
  var headers = [];
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
    headers.forEach(countGroup);
  }
  // A group's header counts the cards the filters leave, and goes when none is left.
  function countGroup(header) {
    var shown = header.cards.filter(function (card) { return !card.hidden; }).length;
    header.querySelector(".group-count").textContent = shown + (shown === 1 ? " finding" : " findings");
    header.hidden = shown === 0;
  }
  // Grouping moves the cards under a header per file, rule or location (file:line of
  // the finding), groups in the order they first appear; none puts the page order back.
  var start = document.createComment("findings");
  if (cards.length) { cards[0].parentNode.insertBefore(start, cards[0]); }
  function keyOf(card) {
    switch (group.value) {
      case "file": return card.dataset.file;
      case "rule": return card.dataset.code + " " + card.dataset.name;
      case "location": return card.dataset.location;
      default: return "";
    }
  }
  function groupHeader(key, members) {
    var header = document.createElement("h2");
    header.className = "group-header";
    var button = document.createElement("button");
    button.type = "button";
    button.setAttribute("aria-expanded", "true");
    var name = document.createElement("span");
    name.className = "group-name";
    name.textContent = key;
    var number = document.createElement("span");
    number.className = "group-count";
    button.appendChild(name);
    button.appendChild(document.createTextNode(" "));
    button.appendChild(number);
    // A button: Enter and Space open and close the group, as a click does.
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", open ? "true" : "false");
      members.forEach(function (card) { card.classList.toggle("group-closed", !open); });
    });
    header.appendChild(button);
    header.cards = members;
    return header;
  }
  function regroup() {
    headers.forEach(function (header) { header.parentNode.removeChild(header); });
    headers = [];
    var order = [], members = Object.create(null);
    cards.forEach(function (card) {
      card.classList.remove("group-closed");
      var key = keyOf(card);
      if (!(key in members)) { members[key] = []; order.push(key); }
      members[key].push(card);
    });
    var after = start;
    function place(node) { after.parentNode.insertBefore(node, after.nextSibling); after = node; }
    order.forEach(function (key) {
      if (group.value) {
        var header = groupHeader(key, members[key]);
        headers.push(header);
        place(header);
      }
      members[key].forEach(place);
    });
    apply();
  }
  [text, rule, severity, file].forEach(function (control) {
    control.addEventListener("input", apply);
    control.addEventListener("change", apply);
  });
  group.addEventListener("change", regroup);
  document.getElementById("finder-collapse").addEventListener("click", function () {
    cards.forEach(function (card) { card.classList.add("collapsed"); card.querySelector("h2").setAttribute("aria-expanded", "false"); });
  });
  document.getElementById("finder-expand").addEventListener("click", function () {
    cards.forEach(function (card) { card.classList.remove("collapsed"); card.querySelector("h2").setAttribute("aria-expanded", "true"); });
  });
  apply();
})();

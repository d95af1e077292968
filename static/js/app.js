// groundwork's only script besides htmx. The CSP forbids inline scripts, so
// behaviour that htmx attributes cannot express lives here.
(function () {
  "use strict";

  function alertBox(text) {
    var box = document.getElementById("alerts");
    if (!box) return;
    var div = document.createElement("div");
    div.className = "alert";
    div.setAttribute("role", "alert");
    var span = document.createElement("span");
    span.textContent = text; // never innerHTML
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "link";
    btn.setAttribute("data-dismiss", "");
    btn.textContent = "dismiss";
    div.appendChild(span);
    div.appendChild(btn);
    box.replaceChildren(div);
  }

  // Dismiss buttons on alerts.
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t instanceof Element && t.hasAttribute("data-dismiss")) {
      var a = t.closest(".alert");
      if (a) a.remove();
    }
  });

  // Refuse an oversized upload before sending it: the server answers 413
  // anyway, but only after receiving up to the limit, and a browser still
  // sending may see the connection close instead of the answer.
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (!(t instanceof HTMLInputElement) || t.type !== "file" || !t.dataset.maxBytes) return;
    var max = Number(t.dataset.maxBytes);
    var f = t.files && t.files[0];
    if (f && max > 0 && f.size > max) {
      t.setCustomValidity(f.name + ": file is larger than the " + t.dataset.limit + " upload limit");
      t.reportValidity();
    } else {
      t.setCustomValidity("");
    }
  });

  // Evidence: clicking an argument highlights where its value was found,
  // in the visible pane (the exact text) or in the hidden pane (the item).
  function clearMarks(card) {
    card.querySelectorAll("mark.evidence").forEach(function (m) {
      m.replaceWith(document.createTextNode(m.textContent));
    });
    card.querySelectorAll(".evidence-target").forEach(function (el) {
      el.classList.remove("evidence-target");
    });
    card.querySelectorAll(".content").forEach(function (c) { c.normalize(); });
  }

  function markText(root, needle) {
    if (!needle) return null;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var node;
    while ((node = walker.nextNode())) {
      var i = node.data.indexOf(needle);
      if (i >= 0) {
        var range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + needle.length);
        var mark = document.createElement("mark");
        mark.className = "evidence";
        range.surroundContents(mark);
        return mark;
      }
    }
    return null;
  }

  document.addEventListener("click", function (e) {
    var btn = e.target instanceof Element ? e.target.closest("button.arg") : null;
    if (!btn) return;
    var card = btn.closest(".decision");
    if (!card) return;
    clearMarks(card);
    btn.classList.add("evidence-target");
    var d = btn.dataset, target = null;
    if (d.msg) {
      var msg = card.querySelector('[data-testid=visible-pane] .msg[data-index="' + d.msg + '"]');
      if (msg) {
        msg.classList.add("evidence-target");
        target = markText(msg, d.needle) || msg;
      } else {
        // The message is collapsed among the earlier ones: point at the button.
        target = card.querySelector("[data-testid=visible-pane] [data-testid=earlier]");
        if (target) target.classList.add("evidence-target");
      }
    } else if (d.hiddenEntry || d.hiddenMsg) {
      var sel = d.hiddenMsg
        ? '[data-testid=hidden-item][data-index="' + d.hiddenMsg + '"]'
        : "[data-testid=hidden-item][data-entry=\"" + d.hiddenEntry + "\"]";
      var item = card.querySelector(sel);
      if (item) {
        item.open = true;
        item.classList.add("evidence-target");
        target = markText(item, btn.querySelector(".strong") ? btn.querySelector(".strong").textContent : "") || item;
      }
    }
    if (target && target.scrollIntoView) target.scrollIntoView({ block: "nearest", behavior: "smooth" });
  });

  // The server could not be reached at all.
  document.addEventListener("htmx:sendError", function () {
    alertBox("The server could not be reached. Check your connection and try again.");
  });
})();

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

  // The server could not be reached at all.
  document.addEventListener("htmx:sendError", function () {
    alertBox("The server could not be reached. Check your connection and try again.");
  });
})();

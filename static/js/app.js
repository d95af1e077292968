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
    var el = e.target instanceof Element ? e.target : null;
    var btn = el ? el.closest("button.arg") : null;
    // "see the record in message 7" under a policy finding: its argument's.
    var link = el ? el.closest("[data-show-evidence]") : null;
    if (!btn && link && link.closest("li")) btn = link.closest("li").querySelector("button.arg");
    if (btn) showEvidence(btn, true);
  });

  function showEvidence(btn, scroll) {
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
    if (!target) return null;
    if (scroll && target.scrollIntoView) {
      target.scrollIntoView({ block: "nearest", behavior: "smooth" });
    } else {
      revealInBoxes(target, card);
    }
    return target;
  }

  // revealInBoxes scrolls the scroll boxes between el and the card (a long
  // observation's code box, the history pane) so that el shows, without
  // moving the page: on a new review item the mark is visible at once.
  function revealInBoxes(el, card) {
    for (var box = el.parentElement; box && box !== card; box = box.parentElement) {
      var st = getComputedStyle(box);
      var y = box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(st.overflowY);
      var x = box.scrollWidth > box.clientWidth && /(auto|scroll)/.test(st.overflowX);
      if (!y && !x) continue;
      var r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
      if (y) box.scrollTop += r.top - b.top - box.clientHeight / 3;
      if (x) box.scrollLeft += r.left - b.left - box.clientWidth / 3;
    }
  }

  // The server could not be reached at all.
  document.addEventListener("htmx:sendError", function () {
    alertBox("The server could not be reached. Check your connection and try again.");
  });
  // Review screen (#review): the argument in question is highlighted as
  // soon as an item shows; keys a/r/s/u press the matching buttons, n goes
  // to the note, Enter saves it, ? toggles the shortcut list. The lease is
  // renewed while the annotator is active.
  function review() { return document.getElementById("review"); }

  // The item on screen: a new one starts at the top of the page, where its
  // "why queued" is, wherever the last one was scrolled to.
  var shownItem = null;
  // Verdict and skip keys wait until a new item has been on screen a
  // moment (settleMs; #review gets data-ready then, and its key buttons
  // look pressable again), so a double press or a held key never judges an
  // item nobody has seen; nor does a key pressed while a swap is under way.
  var swapping = false, settleMs = 400;
  // Text typed into the note while the next item loaded (carried), and the
  // key of the button that had the focus (refocus), moved to the new item.
  var sentNote = "", carried = null, refocus = "";
  function noteField(r) { return r ? r.querySelector("[data-note-input]") : null; }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var r = review();
    if (r && r.contains(e.detail.elt)) {
      var note = noteField(r);
      sentNote = note ? note.value : "";
      keepNote(note);
    }
  });

  // The text of a note not yet sent survives leaving the page: a session
  // that ended (the login page, then back), a reload, the Back button. It
  // is kept in sessionStorage under the field's data-note-key (one per user
  // and item), put back when that item shows again, and forgotten once a
  // response says the server saved it (Groundwork-Note-Saved: the item).
  function keepNote(note) {
    var key = note && note.getAttribute("data-note-key");
    if (!key) return;
    try {
      if (note.value.trim() !== "") sessionStorage.setItem(key, note.value);
      else sessionStorage.removeItem(key);
    } catch (err) { /* storage full or disabled: the field still holds it */ }
  }
  function keptNote(note) {
    var key = note && note.getAttribute("data-note-key");
    try { return key ? sessionStorage.getItem(key) || "" : ""; } catch (err) { return ""; }
  }
  function forgetNote(note) {
    var key = note && note.getAttribute("data-note-key");
    try { if (key) sessionStorage.removeItem(key); } catch (err) { /* nothing kept */ }
  }
  document.addEventListener("input", function (e) {
    if (e.target instanceof HTMLTextAreaElement && e.target.hasAttribute("data-note-input")) keepNote(e.target);
  });
  window.addEventListener("pagehide", function () { keepNote(noteField(review())); });
  // A session that ended answers with HX-Redirect to the login page: the
  // note is kept, so leaving for it asks nothing.
  var redirected = false;
  document.addEventListener("htmx:beforeOnLoad", function (e) {
    if (e.detail.xhr && e.detail.xhr.getResponseHeader("HX-Redirect")) {
      keepNote(noteField(review()));
      redirected = true;
    }
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    var r = review();
    if (!r || e.detail.target !== r) return;
    swapping = true;
    var note = noteField(r), a = document.activeElement;
    var saved = e.detail.xhr && e.detail.xhr.getResponseHeader("Groundwork-Note-Saved");
    if (saved && saved === r.getAttribute("data-item")) forgetNote(note);
    // A refused write (503: the database was busy) recorded nothing: the
    // note sent with it stays in the field, whole.
    var unsent = e.detail.xhr && e.detail.xhr.status >= 500;
    carried = null;
    if (note && unsent && note.value !== "") {
      carried = { text: note.value, focus: a === note, kept: true };
    } else if (note && (a === note || note.value !== sentNote)) {
      var text = note.value;
      if (sentNote !== "" && text.indexOf(sentNote) === 0) text = text.slice(sentNote.length).replace(/^\s+/, "");
      else if (text === sentNote) text = "";
      carried = { text: text, focus: a === note };
    }
    refocus = a instanceof HTMLElement && a.dataset.key ? a.dataset.key : "";
  });
  function onReview() {
    var r = review();
    swapping = false;
    if (!r) return;
    var item = r.getAttribute("data-item");
    var changed = item !== shownItem;
    if (changed) {
      if (shownItem !== null) window.scrollTo(0, 0);
      shownItem = item;
      setTimeout(function () { r.setAttribute("data-ready", ""); }, settleMs);
    } else {
      // The same item again (a note saved): keys go on acting on it, and
      // only text typed while it was saved goes back into the note.
      r.setAttribute("data-ready", "");
      if (carried && carried.text === "") carried = null;
      refocus = "";
    }
    var note = noteField(r);
    // Text kept from before the page was left goes back into its item's
    // field (what was typed while the item loaded wins).
    var kept = keptNote(note);
    if (note && kept !== "" && note.value === "" && !(carried && carried.text !== "")) note.value = kept;
    if (carried && note) {
      if (carried.text !== "") {
        note.value = carried.text;
        if (changed) alertBox("What you typed while the next item loaded is in this item's note, not saved: check that it belongs here.");
      }
      if (carried.focus || (carried.text !== "" && !carried.kept)) note.focus({ preventScroll: true });
      else if (refocus) {
        var k = r.querySelector('button[data-key="' + refocus + '"]');
        if (k) k.focus({ preventScroll: true });
      }
    } else if (refocus) {
      var b = r.querySelector('button[data-key="' + refocus + '"]');
      if (b) b.focus({ preventScroll: true });
    }
    carried = null;
    refocus = "";
    keepNote(note);
    // A live region swapped in with its text is not always announced:
    // repeat the notice in #announce, which stays.
    var notice = r.querySelector("[data-testid=notice]"), live = document.getElementById("announce");
    if (live) live.textContent = notice ? notice.textContent : "";
    var q = r.querySelector("button.arg[data-question]");
    var ev = q ? showEvidence(q, false) : null;
    if (ev && stacked.matches && window.scrollY === 0) bringIntoView(r, ev);
  }
  // Stacked panes (a narrow window) put the history below the action, and
  // the evidence often below the fold or under the sticky action bar:
  // scroll the page just enough to show it (the least scroll, so the
  // argument in question stays on screen whenever both fit).
  var stacked = window.matchMedia("(max-width: 1099.98px)");
  function bringIntoView(r, ev) {
    var bar = r.querySelector("[data-testid=review-actions]");
    var bottom = window.innerHeight - (bar ? bar.getBoundingClientRect().height : 0) - 12;
    var need = ev.getBoundingClientRect().bottom - bottom;
    if (need > 0) window.scrollBy(0, need);
  }
  document.addEventListener("DOMContentLoaded", onReview);
  document.addEventListener("htmx:afterSettle", onReview);

  function typing(el) {
    return el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function toggleShortcuts() {
    var d = document.getElementById("shortcuts");
    if (!d) return;
    if (d.open) d.close(); else d.showModal();
  }

  document.addEventListener("click", function (e) {
    if (e.target instanceof Element && e.target.closest("[data-shortcuts]")) toggleShortcuts();
  });

  // The same guard for clicks: a double click on a verdict button (the
  // second lands on the next item's button, in the same place) or Enter
  // held on a focused one acts once.
  document.addEventListener("click", function (e) {
    var b = e.target instanceof Element ? e.target.closest("#review .review-actions button[data-key]") : null;
    var r = review();
    if (b && r && b.dataset.key !== "u" && (swapping || !r.hasAttribute("data-ready"))) {
      e.preventDefault();
      e.stopPropagation();
    }
  }, true);

  document.addEventListener("keydown", function (e) {
    var r = review();
    if (!r || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    var t = e.target;
    if (e.repeat && e.key === "Enter" && t instanceof HTMLButtonElement && r.contains(t)) {
      e.preventDefault(); // a held Enter on a focused button clicks once
      return;
    }
    if (typing(t)) {
      if (t.hasAttribute("data-note-input") && e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        if (t.value.trim() !== "" && t.form) t.form.requestSubmit();
      } else if (e.key === "Escape") {
        t.blur();
      }
      return;
    }
    if (e.key === "?") {
      e.preventDefault();
      toggleShortcuts();
      return;
    }
    var d = document.getElementById("shortcuts");
    if (d && d.open) return;
    // Caps Lock or Shift: the same key.
    var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === "n") {
      var note = noteField(r);
      if (note) {
        e.preventDefault();
        note.focus();
      }
      return;
    }
    var btn = r.querySelector('button[data-key="' + key + '"]');
    if (!btn) return;
    e.preventDefault();
    // A held key repeats: it acts once. Verdicts and skips also wait for
    // the item to settle on screen; undo does not (it judges nothing).
    if (e.repeat || swapping || (key !== "u" && !r.hasAttribute("data-ready"))) return;
    if (!btn.disabled) btn.click();
  });

  // Trajectory page: j and k move to the next and the previous decision
  // card, and the address names it (#d7) so it can be shared.
  document.addEventListener("keydown", function (e) {
    if ((e.key !== "j" && e.key !== "k") || review() || e.ctrlKey || e.metaKey || e.altKey || e.isComposing || typing(e.target)) return;
    var cards = document.querySelectorAll("[data-testid=decisions] article.decision");
    var target = null;
    for (var i = 0; i < cards.length; i++) {
      var top = cards[i].getBoundingClientRect().top;
      if (e.key === "j" && top > 40) { target = cards[i]; break; }
      if (e.key === "k" && top < -8) target = cards[i];
    }
    if (!target) return;
    e.preventDefault();
    target.scrollIntoView({ block: "start" });
    history.replaceState(null, "", "#" + target.id);
    // The card takes the focus, so Tab goes on to its arguments (and the
    // address change, which :target does not see, shows on the card).
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
  });

  // A note typed and not saved goes with a verdict, skip or undo (their
  // forms include it), and is kept in this tab when the page is left
  // (keepNote). Leaving any other way still asks first, as a reminder: a
  // boosted link (htmx swaps the body, so the browser never unloads the
  // page) and a real unload alike (closing the tab loses the copy), but
  // not the login page taking over an ended session.
  function unsavedNote() {
    var note = document.querySelector("#review [data-note-input]");
    return !!note && note.value.trim() !== "";
  }
  document.addEventListener("htmx:confirm", function (e) {
    if (e.detail.target !== document.body || !unsavedNote()) return;
    e.preventDefault();
    if (window.confirm("Your note on this decision is not saved yet. Leave the review screen? The note is kept in this tab and comes back with the item.")) {
      e.detail.issueRequest(true);
    }
  });
  window.addEventListener("beforeunload", function (e) {
    if (unsavedNote() && !redirected) {
      e.preventDefault();
      e.returnValue = "";
    }
  });

  var lastActive = Date.now(), lastRenew = Date.now();
  ["keydown", "pointerdown", "scroll", "mousemove"].forEach(function (type) {
    document.addEventListener(type, function () { lastActive = Date.now(); }, { passive: true });
  });
  document.addEventListener("htmx:afterSettle", function () { lastRenew = Date.now(); });
  setInterval(function () {
    var r = review();
    if (!r || !r.dataset.renew) return;
    var now = Date.now();
    // Renew every two minutes while someone worked on the page lately.
    if (now - lastRenew < 120000 || now - lastActive > 300000) return;
    lastRenew = now;
    fetch(r.dataset.renew, { method: "POST", credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (resp) {
        if (resp.status === 409) {
          alertBox("Your claim on this item has expired and another annotator holds it now. Judging it will record nothing; press s to move on.");
        }
      })
      .catch(function () {});
  }, 30000);
})();

// Every page: copy buttons, and "/" to jump to the search box. No network, no external code.
(function () {
  "use strict";

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }

  function flash(button, text) {
    var before = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", before);
    button.textContent = text;
    button.classList.add("done");
    window.setTimeout(function () {
      button.textContent = before;
      button.classList.remove("done");
    }, 1400);
  }

  function copy(button) {
    var text = button.getAttribute("data-copy") || "";
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { flash(button, "copied"); }, function () {
        flash(button, fallbackCopy(text) ? "copied" : "select it");
      });
    } else {
      flash(button, fallbackCopy(text) ? "copied" : "select it");
    }
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    var button = target && target.closest ? target.closest("button.copy") : null;
    if (button) {
      event.preventDefault();
      copy(button);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "TEXTAREA" || active.isContentEditable)) return;
    var box = document.getElementById("q") || document.querySelector("form.quick input");
    if (box) {
      event.preventDefault();
      box.focus();
      box.select();
    }
  });
})();

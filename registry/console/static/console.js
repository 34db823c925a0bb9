// Keyboard navigation for the msgcontract console. Everything works
// without this script; it only adds shortcuts.
(function () {
  "use strict";
  var rows = [], sel = -1, pendingG = false, viol = -1;
  function typing(e) {
    var t = e.target.tagName;
    return t === "INPUT" || t === "TEXTAREA" || t === "SELECT" || e.target.isContentEditable;
  }
  function select(i) {
    if (!rows.length) return;
    if (sel >= 0) rows[sel].classList.remove("sel");
    sel = Math.max(0, Math.min(rows.length - 1, i));
    rows[sel].classList.add("sel");
    rows[sel].scrollIntoView({ block: "nearest" });
  }
  function go(sel) { var a = document.querySelector(sel); if (a) window.location = a.href; }
  document.addEventListener("DOMContentLoaded", function () {
    var t = document.querySelector("[data-rows] tbody");
    rows = t ? Array.prototype.slice.call(t.querySelectorAll("tr[data-href]")) : [];
  });
  document.addEventListener("keydown", function (e) {
    var help = document.getElementById("keys");
    if (e.key === "Escape") { help.hidden = true; if (typing(e)) e.target.blur(); return; }
    if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (pendingG) {
      pendingG = false;
      var dest = { s: "/ui/", c: "/ui/check", d: "/ui/dlq" }[e.key];
      if (dest) { window.location = dest; e.preventDefault(); }
      return;
    }
    switch (e.key) {
      case "g": pendingG = true; return;
      case "?": help.hidden = !help.hidden; break;
      case "/": var f = document.querySelector("[data-focus]"); if (f) f.focus(); break;
      case "j": select(sel + 1); break;
      case "k": select(sel - 1); break;
      case "Enter": if (sel >= 0) window.location = rows[sel].getAttribute("data-href"); else return; break;
      case "n": case "p":
        var vs = document.querySelectorAll("[data-violation]");
        if (vs.length) {
          viol = e.key === "n" ? Math.min(vs.length - 1, viol + 1) : Math.max(0, viol - 1);
          vs[viol].focus(); vs[viol].scrollIntoView({ block: "center" });
        } else go(e.key === "n" ? "a[rel=next]" : "a[rel=prev]");
        break;
      default: return;
    }
    e.preventDefault();
  });
})();

// Printing shows every check: open all of them before the print dialog renders the page.
window.addEventListener("beforeprint", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
});

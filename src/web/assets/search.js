// The search page's progressive enhancement. Without this file the page works as it is: the
// header's search box is a plain GET form and the server renders the results. With it, on the
// search page only, the results follow the box as one types: the same page is fetched from the
// server (the same rules, the same order, the same messages) and its results replace these.
// Served from this origin under a hashed path; the pages' policy allows no inline script.
(function () {
  'use strict';
  var results = document.getElementById('search-results');
  var form = document.querySelector('form.site-search');
  var input = document.getElementById('site-search-q');
  if (!results || !form || !input || !window.fetch || !window.DOMParser) return;
  // A page that shows a refusal keeps to the form: its other parameters would be refused again.
  if (results.querySelector('[role="alert"]')) return;

  var WAIT_MS = 250;
  // The words a search takes (the API's bounds): anything else is left to the form, whose page
  // says why (a refused request would log an error in the console).
  var Q_MIN = 2;
  var Q_MAX = 100;
  var timer = 0;
  var inFlight = null;
  var last = input.value.trim();

  function targetUrl(q) {
    var url = new URL(window.location.href);
    var params = url.searchParams;
    params.delete('page');
    if (q === '') params.delete('q');
    else params.set('q', q);
    url.search = params.toString();
    return url;
  }

  function update() {
    var q = input.value.trim();
    if (q === last || (q !== '' && (q.length < Q_MIN || q.length > Q_MAX))) return;
    var url = targetUrl(q);
    if (inFlight) inFlight.abort();
    var controller = new AbortController();
    inFlight = controller;
    results.setAttribute('aria-busy', 'true');
    fetch(url.href, { headers: { accept: 'text/html' }, signal: controller.signal, credentials: 'same-origin' })
      .then(function (response) {
        // A refused budget (429) or an outage leaves the results as they are.
        if (response.status !== 200 && response.status !== 400) throw new Error('status ' + response.status);
        return response.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var fresh = doc.getElementById('search-results');
        if (!fresh) return;
        results.replaceWith(fresh);
        results = fresh;
        // Only what was shown counts as shown: after a refusal or a failure the same words ask again.
        last = q;
        document.title = doc.title;
        var status = fresh.querySelector('[role="status"], [role="alert"]');
        var announce = document.getElementById('search-announce');
        if (announce && status) announce.textContent = status.textContent;
        window.history.replaceState(null, '', url.pathname + url.search);
      })
      .catch(function () {})
      .then(function () {
        // A request replaced by a newer one leaves the busy mark to that one.
        if (inFlight !== controller) return;
        inFlight = null;
        results.removeAttribute('aria-busy');
      });
  }

  // Sending the form navigates: nothing more is asked for this page.
  form.addEventListener('submit', function () {
    window.clearTimeout(timer);
    if (inFlight) inFlight.abort();
  });

  input.addEventListener('input', function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(update, WAIT_MS);
  });
})();

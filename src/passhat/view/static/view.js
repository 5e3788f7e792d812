// passhat view: the one script its pages run (CSP: script-src 'self').
// Live parts: elements with data-live="URL" are fetched again from the server,
// which escapes everything it sends, whenever the store changes (Server-Sent Events).
"use strict";

function refresh() {
  for (const el of document.querySelectorAll("[data-live]")) {
    fetch(el.dataset.live, { credentials: "same-origin", cache: "no-store" })
      .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
      .then((html) => {
        const doc = new DOMParser().parseFromString(
          el.tagName === "TBODY" ? "<table><tbody>" + html + "</tbody></table>" : html,
          "text/html"
        );
        const fresh = el.tagName === "TBODY" ? doc.querySelector("tbody") : doc.body;
        el.replaceChildren(...Array.from(fresh.childNodes));
        applyFilter();
        applySort();
        document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      })
      .catch(() => {});
  }
}

function listen() {
  const state = document.getElementById("stream");
  if (!window.EventSource || !state) return;
  const source = new EventSource("/events");
  source.addEventListener("hello", () => {
    state.dataset.state = "on";
    state.textContent = "live: on";
  });
  source.addEventListener("change", refresh);
  source.onerror = () => {
    state.dataset.state = "off";
    state.textContent = "live: reconnecting";
  };
}

let sortKey = null;
let sortUp = true;

function applyFilter() {
  const input = document.getElementById("filter");
  if (!input) return;
  const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  for (const row of document.querySelectorAll("#experiments tbody tr[data-experiment]")) {
    const text = row.textContent.toLowerCase();
    row.hidden = !words.every((w) => text.includes(w));
  }
}

function applySort() {
  const body = document.querySelector("table.sortable tbody");
  if (!body || !sortKey) return;
  const rows = Array.from(body.querySelectorAll("tr[data-experiment]"));
  const value = (row) => {
    const v = row.dataset[sortKey] || "";
    const n = Number(v);
    return v !== "" && !Number.isNaN(n) ? n : v.toLowerCase();
  };
  rows.sort((a, b) => {
    const x = value(a), y = value(b);
    return (x < y ? -1 : x > y ? 1 : 0) * (sortUp ? 1 : -1);
  });
  body.append(...rows);
}

function setup() {
  const input = document.getElementById("filter");
  if (input) input.addEventListener("input", applyFilter);
  for (const th of document.querySelectorAll("table.sortable th[data-key]")) {
    th.addEventListener("click", () => {
      sortUp = sortKey === th.dataset.key ? !sortUp : true;
      sortKey = th.dataset.key;
      applySort();
    });
  }
  listen();
}

document.addEventListener("DOMContentLoaded", setup);

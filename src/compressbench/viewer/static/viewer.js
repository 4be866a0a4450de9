/* compressbench viewer: what every page shares. The page's data (script#cb-data, JSON) are
   read once; filters are form controls with data-filter="<key>", mirrored in the URL hash
   (#method=recency&probe=P2), so a link can open a filtered view; the DOM is built with
   textContent only (no data ever goes through innerHTML). */
"use strict";
const CB = (() => {
  const data = JSON.parse(document.getElementById("cb-data").textContent);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const state = {};
    for (const [key, value] of params) if (value !== "") state[key] = value;
    return state;
  }

  function writeHash(state) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(state)) if (value) params.set(key, value);
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  /* Bind every [data-filter] control to the hash; call render(state) now and on each change. */
  function bindFilters(render) {
    const controls = Array.from(document.querySelectorAll("[data-filter]"));
    const apply = () => {
      const state = readHash();
      for (const c of controls) c.value = state[c.dataset.filter] || "";
      render(state);
    };
    const fromControls = () => {
      const state = readHash();
      for (const c of controls) state[c.dataset.filter] = c.value.trim();
      delete state.case;
      writeHash(state);
      render(readHash());
    };
    for (const c of controls) c.addEventListener(c.tagName === "INPUT" ? "input" : "change", fromControls);
    const reset = document.getElementById("reset");
    if (reset) reset.addEventListener("click", (e) => {
      e.preventDefault();
      for (const c of controls) c.value = "";
      fromControls();
    });
    window.addEventListener("hashchange", apply);
    apply();
  }

  /* Show items in pages of pageSize, with a "show more" button; returns nothing. */
  function paged(items, renderItem, pageSize) {
    const main = document.getElementById("cases");
    const more = document.getElementById("more");
    let shown = 0;
    main.replaceChildren();
    const next = () => {
      const frag = document.createDocumentFragment();
      for (const item of items.slice(shown, shown + pageSize)) frag.append(renderItem(item));
      shown = Math.min(items.length, shown + pageSize);
      main.append(frag);
      more.hidden = shown >= items.length;
      more.textContent = `Show more cases (${items.length - shown} left)`;
    };
    more.onclick = next;
    next();
  }

  function count(text) { document.getElementById("count").textContent = text; }

  function num(x, digits = 3) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }

  return { data, el, readHash, writeHash, bindFilters, paged, count, num };
})();

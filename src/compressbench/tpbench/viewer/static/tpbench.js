/* TPBench cases: filters (probe type, method, outcome, dataset, ratio, dialogue id), one card
   per probe with its dialogue, the marks, each method's kept turns and answers; the deletion
   experiment below. Built on CB (viewer.js). */
"use strict";
(() => {
  const { data, el, bindFilters, paged, count, num } = CB;
  const FULL = data.full;
  const PAGE = 15;
  const MARKS = [
    ["goal", "goal", "initial-goal turn"],
    ["update", "update", "the turn where the slot took its new value"],
    ["later", "later update", "a later turn that changed the slot again"],
    ["new", "new value", "holds the new value"],
    ["old", "old value", "holds the old value"],
  ];
  const right = (a) => !!a && a.strict === 1;
  const OUTCOMES = {
    right: (c, m) => right(c.answers[m]),
    wrong: (c, m) => !!c.answers[m] && !right(c.answers[m]),
    full_right_method_wrong: (c, m) =>
      m !== FULL && right(c.answers[FULL]) && !!c.answers[m] && !right(c.answers[m]),
    full_wrong_method_right: (c, m) =>
      m !== FULL && !!c.answers[FULL] && !right(c.answers[FULL]) && right(c.answers[m]),
  };
  for (const c of data.cases) {
    c.markOf = c.turns.map(() => []);
    for (const [key] of MARKS) for (const i of c.marks[key]) if (c.markOf[i]) c.markOf[i].push(key);
    c.keptSets = {};
    for (const [m, a] of Object.entries(c.answers)) c.keptSets[m] = new Set(a.kept);
  }

  function idMatch(c, q) {
    if (!q) return true;
    const needle = q.toLowerCase();
    return String(c.dialogue_id).toLowerCase().includes(needle) || String(c.probe_id).toLowerCase().includes(needle);
  }

  function matches(c, s) {
    if (s.case) return c.key === s.case;
    if (s.probe && c.probe_type !== s.probe) return false;
    if (s.dataset && c.dataset !== s.dataset) return false;
    if (s.ratio && c.r !== s.ratio) return false;
    if (!idMatch(c, s.q)) return false;
    if (s.method && !(s.method in c.answers)) return false;
    if (s.outcome) {
      const test = OUTCOMES[s.outcome];
      if (!test) return false;
      const methods = s.method ? [s.method] : Object.keys(c.answers);
      if (!methods.some((m) => test(c, m))) return false;
    }
    return true;
  }

  function shownMethods(c, s) {
    if (!s.method) return data.methods.filter((m) => m in c.answers);
    return [FULL, s.method].filter((m, i, all) => m && m in c.answers && all.indexOf(m) === i);
  }

  function score(x) {
    if (x === null || x === undefined) return el("td", { class: "num", text: "–" });
    const cls = x === 1 ? "num right" : "num wrong";
    return el("td", { class: cls }, x === 1 ? "1 ✓" : `${num(x, 0)} ✗`);
  }

  function answersTable(c, methods) {
    const head = el("tr", {}, ["method", "kept turns", "answer", "strict", "loose", "answer kind", "raw output"]
      .map((h) => el("th", { scope: "col", text: h })));
    const rows = methods.map((m) => {
      const a = c.answers[m];
      const kept = a.press ? "all (KV press)" : `${a.kept.length} of ${c.turns.length}`;
      const pred = a.prediction === null || a.prediction === undefined ? "(none)" : String(a.prediction);
      const note = a.error ? ` [error: ${a.error}]` : a.abstain ? " [abstains]" : "";
      return el("tr", { "data-method": m },
        el("th", { scope: "row", text: m }),
        el("td", { text: kept }),
        el("td", { class: "answer", "data-field": "prediction", text: pred + note }),
        score(a.strict), score(a.loose),
        el("td", { "data-field": "kind", text: a.kind }),
        el("td", {}, el("details", {}, el("summary", { text: "show" }), el("pre", { class: "answer", text: a.output || "" }))));
    });
    return el("table", { class: "answers" }, el("thead", {}, head), el("tbody", {}, rows));
  }

  function keptCell(c, m, i) {
    const a = c.answers[m];
    if (a.heat) {
      const share = a.heat.shares[i];
      if (share === null || share === undefined) return el("td", { class: "k heat", text: "?", title: "turn text not found in the context" });
      const light = 96 - Math.round(share * 36);
      return el("td", { class: "k heat", style: `background: hsl(140, 45%, ${light}%)`,
        title: `${m}: ${Math.round(share * 100)}% of this turn's text kept`, text: `${Math.round(share * 100)}%` });
    }
    if (a.press) return el("td", { class: "k", text: "n/a", title: "no kept tokens recorded for this answer" });
    const kept = c.keptSets[m].has(i);
    return el("td", { class: kept ? "k kept" : "k dropped", title: `${m}: ${kept ? "kept" : "dropped"}` },
      el("span", { "aria-hidden": "true", text: kept ? "●" : "·" }),
      el("span", { class: "visually-hidden", text: kept ? "kept" : "dropped" }));
  }

  function turnsTable(c, methods) {
    const head = el("tr", {},
      el("th", { scope: "col", text: "#" }), el("th", { scope: "col", text: "speaker" }),
      el("th", { scope: "col", text: "turn" }), el("th", { scope: "col", text: "marks" }),
      methods.map((m) => el("th", { scope: "col", class: "k", text: m })));
    const rows = c.turns.map(([speaker, text], i) => {
      const marks = c.markOf[i];
      return el("tr", { class: marks.join(" ") || null },
        el("td", { class: "num", text: i }), el("td", { text: speaker }),
        el("td", { class: "text", text }),
        el("td", { class: "mark" }, marks.map((k) => {
          const [, label, title] = MARKS.find(([key]) => key === k);
          return el("span", { class: `tag ${k}`, title, text: label });
        })),
        methods.map((m) => keptCell(c, m, i)));
    });
    return el("div", { class: "scroll" }, el("table", { class: "turns" }, el("thead", {}, head), el("tbody", {}, rows)));
  }

  function card(c, s) {
    const methods = shownMethods(c, s);
    const facts = [["Question", c.question], ["Gold answer", c.gold]];
    if (c.probe_type !== "P1" && c.slot) facts.push(["Slot", `${c.slot}: ${c.old_value} → ${c.new_value}`]);
    facts.push(["Probe", `${c.probe_id} (seed ${c.seed}, r = ${c.ratio})`]);
    const link = "#" + new URLSearchParams({ case: c.key }).toString();
    return el("article", { class: "case", "data-key": c.key, "data-probe": c.probe_type, "aria-label": `${c.probe_type} ${c.dialogue_id}` },
      el("h2", {}, `${c.probe_type} · ${c.dataset} · dialogue ${c.dialogue_id} `, el("a", { href: link, text: "(link)" })),
      el("dl", { class: "facts" }, facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])),
      el("h3", { text: "Answers" }), answersTable(c, methods),
      el("h3", { text: "Dialogue" }), turnsTable(c, methods));
  }

  function deletionCard(d) {
    const conds = d.conditions.map((x) => el("div", { class: x.full ? "cond full" : "cond", "data-condition": x.condition },
      el("h3", { text: x.full ? `${x.condition} (nothing removed)` : x.condition }),
      x.removed.length ? el("ul", {}, x.removed.map(([i, sp, t]) => el("li", {}, el("span", { class: "tag removed", text: `removed turn ${i}` }), ` ${sp}: ${t}`))) : null,
      el("p", {}, el("strong", { text: "Answer: " }), x.prediction === null || x.prediction === undefined ? "(none)" : String(x.prediction)),
      el("p", {}, "strict: ", el("span", { class: x.strict === 1 ? "right" : "wrong", text: x.strict === 1 ? "1 ✓" : `${num(x.strict, 0)} ✗` }))));
    return el("article", { class: "case deletion", "data-probe-id": d.probe_id },
      el("h2", { text: `${d.dataset} · dialogue ${d.dialogue_id} · ${d.probe_id}` }),
      el("dl", { class: "facts" }, el("dt", { text: "Question" }), el("dd", { text: d.question }), el("dt", { text: "Gold answer" }), el("dd", { text: d.gold })),
      el("div", { class: "pair" }, conds));
  }

  function render(s) {
    const shown = data.cases.filter((c) => matches(c, s));
    count(`${shown.length} of ${data.cases.length} probes shown`);
    paged(shown, (c) => card(c, s), PAGE);
    const dels = data.deletions.filter((d) => (!s.dataset || d.dataset === s.dataset) && idMatch(d, s.q));
    document.getElementById("deletion-list").replaceChildren(...dels.map(deletionCard));
    if (s.case) document.getElementById("cases").focus();
  }

  bindFilters(render);
})();

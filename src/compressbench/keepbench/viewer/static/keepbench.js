/* KEEP-Bench cases: filters (subset, compressor, outcome, case id), one card per case with the
   query, the source context and each compressor's output with its propositions kept and lost.
   Built on CB (viewer.js). */
"use strict";
(() => {
  const { data, el, bindFilters, paged, count } = CB;
  const compressorOf = (label) => label.split(" x")[0];
  const lost = (o) => Object.values(o.verdicts).some((v) => v.preserved !== true);
  const complete = (o) => Object.keys(o.verdicts).length > 0 && !lost(o);

  function outputs(c, s) {
    return data.labels.filter((l) => l in c.outputs && (!s.compressor || compressorOf(l) === s.compressor));
  }

  function matches(c, s) {
    if (s.subset && c.subset !== s.subset) return false;
    if (s.q && !c.case_id.toLowerCase().includes(s.q.toLowerCase())) return false;
    const labels = outputs(c, s);
    if (s.compressor && !labels.length) return false;
    if (s.outcome === "lost" && !labels.some((l) => lost(c.outputs[l]))) return false;
    if (s.outcome === "complete" && !labels.some((l) => complete(c.outputs[l]))) return false;
    return true;
  }

  function verdictText(v) {
    if (!v) return ["not judged", "lost"];
    if (v.preserved === true) return ["kept", "kept"];
    if (v.preserved === false) return ["lost", "lost"];
    return ["undecided (judge error)", "lost"];
  }

  function outputBlock(c, label) {
    const o = c.outputs[label];
    const props = c.propositions.map((p) => {
      const v = o.verdicts[p.id];
      const [text, cls] = verdictText(v);
      const why = v ? (v.shortcut ? `decided without a call: ${v.shortcut}` : v.error ? `error: ${v.error}` : v.reason || "") : "";
      return el("li", { class: `prop ${cls}`, "data-prop": p.id, "data-verdict": text },
        el("strong", { text: `${text}: ` }), `${p.text} `,
        el("span", { class: "note", text: `(${p.role}${p.group ? ", " + p.group : ""}; judgement ${v && v.judgement !== null ? v.judgement : "–"})` }),
        why ? el("details", {}, el("summary", { text: "judge's reason" }), el("pre", { class: "answer", text: why })) : null);
    });
    return el("div", { class: "output", "data-label": label },
      el("h3", { text: `${label} (budget ${o.budget ?? "–"} sentences; ${o.compressed_tokens ?? "?"} of ${o.source_tokens ?? "?"} tokens)` }),
      el("p", { class: "answer", text: o.compressed || "(empty output)" }),
      el("ul", {}, props));
  }

  function card(c, s) {
    return el("article", { class: "case", "data-case": c.case_id },
      el("h2", { text: `${c.subset} · ${c.case_id}` }),
      el("dl", { class: "facts" }, el("dt", { text: "Query" }), el("dd", { text: c.query })),
      el("details", {}, el("summary", { text: `Source context (${c.paragraphs.length} paragraphs)` }),
        c.paragraphs.map((p) => el("p", { class: "answer", text: p }))),
      el("div", { class: "pair" }, outputs(c, s).map((l) => outputBlock(c, l))));
  }

  function render(s) {
    const shown = data.cases.filter((c) => matches(c, s));
    count(`${shown.length} of ${data.cases.length} cases shown`);
    paged(shown, (c) => card(c, s), 10);
  }

  bindFilters(render);
})();

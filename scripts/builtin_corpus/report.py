import sys
sys.path[:0] = ["/work/main/src", "/work/main/tests"]
from compressbench.corpora.loaders import load_corpus
from corpus_stats import change_events, corpus_stats

ds = list(load_corpus("builtin"))
p2 = p3 = ev = 0
for d in ds:
    evs = change_events(d)
    flags = []
    for e in evs:
        ev += 1; p2 += e.p2_eligible; p3 += e.p3_eligible
        tag = "".join([("F" if e.final else "-"), ("2" if e.p2_eligible else "-"), ("3" if e.p3_eligible else "-"),
                       ("A" if e.alias_equivalent else "-"), ("T" if e.value_in_text else "!")])
        flags.append(f"  t{e.turn:<2} {tag} {e.key}: {e.old} -> {e.new}")
    if "-v" in sys.argv:
        print(d.dialogue_id, d.n_turns, d.services); print("\n".join(flags))
print(len(ds), "dialogues", sorted({s for d in ds for s in d.services}))
print("events", ev, "P2", p2, "P3", p3)
print(corpus_stats(ds))

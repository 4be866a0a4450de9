"""Build src/compressbench/corpora/builtin/data/test/ from the authored dialogues."""
import importlib
import json
import re
import sys
from pathlib import Path

from dsl import DIALOGUES_BY_FILE, D, S, U
from schema_def import SERVICES, schema_json

OUT = Path("/work/main/src/compressbench/corpora/builtin/data/test")
FILES = [1, 2, 3]


def norm(x):
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s:/\-]+", " ", x.lower())).strip()


def act(name, slot, values):
    return {"act": name, "canonical_values": list(values), "slot": slot, "values": list(values)}


def spans(text, values_by_slot):
    """Character spans of the first value of each slot found in the text (word-bounded)."""
    out = []
    for slot, vals in values_by_slot.items():
        for v in vals:
            m = re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", text)
            if m:
                out.append({"exclusive_end": m.end(), "slot": slot, "start": m.start()})
                break
    return out


def build(d: D, file_no: int, index: int, warnings: list) -> dict:
    did = f"{file_no}_{index:05d}"
    svc, intents, state, services = d.service, {}, {}, []
    turns = []
    all_text = " ".join(norm(t.text) for t in d.turns)
    for i, t in enumerate(d.turns):
        assert isinstance(t, U if i % 2 == 0 else S), (did, i, "alternation")
        if isinstance(t, U):
            if t.svc:
                svc = t.svc
            if svc not in services:
                services.append(svc)
            spec = SERVICES[svc]
            prev_intent = intents.get(svc, "NONE")
            if i == 0:
                intents[svc] = d.intent
            if t.intent:
                intents[svc] = t.intent
            assert intents.get(svc) in spec["intents"], (did, i, intents.get(svc))
            st = state.setdefault(svc, {})
            actions = []
            if intents[svc] != prev_intent:
                actions.append(act("INFORM_INTENT", "intent", [intents[svc]]))
            updates = {}
            for slot, v in t.slots.items():
                assert slot in spec["slots"], (did, i, svc, slot)
                vals = [v] if isinstance(v, str) else list(v)
                sdef = spec["slots"][slot]
                if sdef["is_categorical"]:
                    assert vals[0] in sdef["possible_values"], (did, i, slot, vals)
                elif slot not in d.absent and norm(vals[0]) not in all_text:
                    warnings.append(f"{did} turn {i}: {slot}={vals[0]!r} not in text")
                updates[slot] = vals
                st[slot] = vals
                actions.append(act("INFORM", slot, vals))
            for slot in t.req:
                assert slot in spec["slots"], (did, i, slot)
                actions.append(act("REQUEST", slot, []))
            if not actions and t.text.lower().startswith(("yes", "okay", "sure")):
                actions.append(act("AFFIRM", "", []))
            frame = {
                "actions": actions,
                "service": svc,
                "slots": spans(t.text, updates),
                "state": {
                    "active_intent": intents[svc],
                    "requested_slots": list(t.req),
                    "slot_values": {k: list(st[k]) for k in sorted(st)},
                },
            }
            turns.append({"frames": [frame], "speaker": "USER", "utterance": t.text})
        else:
            spec = SERVICES[svc]
            actions = [act("REQUEST", slot, []) for slot in t.req]
            for slot in t.req:
                assert slot in spec["slots"], (did, i, slot)
            confirmed = {}
            if "Please confirm" in t.text:
                low = t.text.lower()
                for slot, vals in state.get(svc, {}).items():
                    if any(v.lower() in low for v in vals):
                        actions.append(act("CONFIRM", slot, vals))
                        confirmed[slot] = vals
            turns.append({"frames": [{"actions": actions, "service": svc,
                                      "slots": spans(t.text, confirmed)}],
                          "speaker": "SYSTEM", "utterance": t.text})
    return {"dialogue_id": did, "services": services, "turns": turns}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    warnings = []
    for n in FILES:
        importlib.import_module(f"dialogues_{n}")
        dialogues = [build(d, n, i, warnings) for i, d in enumerate(DIALOGUES_BY_FILE[n])]
        (OUT / f"dialogues_{n:03d}.json").write_text(json.dumps(dialogues, indent=2, ensure_ascii=False) + "\n")
    (OUT / "schema.json").write_text(json.dumps(schema_json(), indent=2) + "\n")
    for w in warnings:
        print("WARN", w)
    print(sum(len(v) for v in DIALOGUES_BY_FILE.values()), "dialogues")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FILES[:] = [int(a) for a in sys.argv[1:]]
    main()

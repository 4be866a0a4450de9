"""The named variants of ``turning_point`` (issue #31): method names of their own, each a preset
of :class:`~compressbench.compress.turning_point.method.TurningPointMethod` settings."""

from __future__ import annotations

from typing import Any

# Method names of the labelled variants (issue #31), each its own row in a run: the preset
# settings under the name, ``method_params.<name>`` on top. ``turning_point_framed`` keeps a
# value stated in a turn with a revision cue together with that whole turn ("No, change the
# name to Joseph."), ``turning_point_confirmed`` with a whole turn that confirms ("Please
# confirm: table for 4 people at The Big 4."), ``turning_point_cued`` with either;
# ``turning_point_filled`` spends the budget the values leave on the words before each kept
# value; ``turning_point_sentences`` keeps whole sentences only; ``turning_point_query`` reads
# the question (an upper line for the query-agnostic method: the paper's methods never read
# it); ``turning_point_schema`` is the default with the service schema files a config names in
# ``method_params.turning_point_schema.schema`` (the corpus's own: which file is the run's
# choice, so the preset sets none, and without one it is the default);
# ``turning_point_unlabelled`` is ``turning_point_filled`` without speaker labels (their tokens
# go to more values and the words before them); ``turning_point_replied`` is
# ``turning_point_filled`` whose kept system offers bring the user's acceptance ("at 9:40 am?"
# "Yes, that works"); ``turning_point_numbered`` is ``turning_point_filled`` with each line
# labelled ``[Tn] SPEAKER:`` as full context's are (the reader sees the gaps and the order of
# the turns); ``turning_point_stated`` is ``turning_point_filled`` with the state line (the
# last mention of each changed time, date or schema slot); ``turning_point_counted`` is
# ``turning_point_stated`` whose line lists each unit's count too ("4 people", "$850");
# ``turning_point_named`` is ``turning_point_counted`` whose line ends with the names of the
# user's last naming turn, when a name changed ("names Isushi, Castro Valley");
# ``turning_point_headed`` is ``turning_point_counted`` with its line before the kept pieces;
# ``turning_point_dated`` is ``turning_point_counted`` whose mentions read dates whole (a name
# stops where a date starts, "Seattle" and "March 7th"; a date keeps its year);
# ``turning_point_schema_counted`` is ``turning_point_counted`` with the service schema files a
# config names in its ``method_params`` (as ``turning_point_schema``), so the line also lists
# the categorical slots of services the packaged lexicon never saw ("car type Hatchback");
# ``turning_point_schema_dated`` is ``turning_point_schema_counted`` whose mentions read dates
# whole (both settings above together); ``turning_point_schema_unpaired`` is
# ``turning_point_schema_counted`` whose line leaves out a kind a single turn names with two
# texts (the kind of two slots: "pick up on March 8th, drop off March 12th");
# ``turning_point_schema_ranged`` is ``turning_point_schema_counted`` whose date entry lists the
# dates of the last turn naming two or more, in order ("date March 8th to March 12th");
# ``turning_point_schema_spanned`` is ``turning_point_schema_ranged`` whose two dates are a start
# and an end date entry ("start date March 8th; end date March 12th");
# ``turning_point_bare`` is the r = 0.1 setting: bare values, no labels, a user's own revisions
# and late mentions weighed up.
NAMED_VARIANTS: dict[str, dict[str, Any]] = {
    "turning_point": {},
    "turning_point_framed": {"frame": "revision"},
    "turning_point_confirmed": {"frame": "confirmation"},
    "turning_point_cued": {"frame": "cued"},
    "turning_point_filled": {"fill": "frames"},
    "turning_point_sentences": {"units": "sentence"},
    "turning_point_query": {"query": "question"},
    "turning_point_schema": {},
    "turning_point_unlabelled": {"fill": "frames", "labels": "none"},
    "turning_point_replied": {"fill": "frames", "frame": "reply"},
    "turning_point_numbered": {"fill": "frames", "labels": "turn"},
    "turning_point_stated": {"fill": "frames", "state": "latest"},
    "turning_point_counted": {"fill": "frames", "state": "counted"},
    "turning_point_named": {"fill": "frames", "state": "named"},
    "turning_point_headed": {"fill": "frames", "state": "counted", "state_at": "start"},
    "turning_point_dated": {"fill": "frames", "state": "counted", "dates": "whole"},
    "turning_point_schema_counted": {"fill": "frames", "state": "counted"},
    "turning_point_schema_dated": {"fill": "frames", "state": "counted", "dates": "whole"},
    "turning_point_schema_unpaired": {"fill": "frames", "state": "unpaired"},
    "turning_point_schema_ranged": {"fill": "frames", "state": "ranged"},
    "turning_point_schema_spanned": {"fill": "frames", "state": "spanned"},
    "turning_point_bare": {
        "units": "value",
        "revisions": "same_speaker",
        "recency": 0.8,
        "revised": 3.0,
        "labels": "none",
    },
}

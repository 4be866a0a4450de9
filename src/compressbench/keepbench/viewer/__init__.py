"""KEEP-Bench's cases in the viewer: per case the query, the source context and each
compressor's output with the evidence propositions it kept and lost, with the judge's
verdicts (:mod:`.cases` joins the stage files, :mod:`.page` makes the page)."""

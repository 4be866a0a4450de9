"""TPBench's cases in the viewer: per probe, the dialogue turn by turn with what each method
kept, the turns that matter, each method's answer and scores; the deletion experiment.

:mod:`.marks` finds the turns that matter and a press's kept share per turn, :mod:`.cases`
joins the stage files into the page's data, :mod:`.summary` writes the per-method table at
the top, :mod:`.page` makes the page (the generic :mod:`compressbench.viewer` renders it).
"""

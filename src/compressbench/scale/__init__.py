"""Scale-out: the answers of many cells as Ray tasks over a pool of reader workers.

``plan`` (which prompts still need an answer, in the batches the serial stage would make),
``worker`` (one reader per Ray actor, and a reader that replays what the workers answered),
``ray_answers`` (the driver: Ray pool, answer cache as the join point, cell files written by
the answers stage's own code). Ray is imported only by ``ray_answers`` when a run starts.
"""

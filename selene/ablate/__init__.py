"""`selene ablate`: which data makes the better model. Variants of a pipeline's data stages, stages
they have in common run once, the same proxy model trained on each with several seeds, evaluated on
the same harness tasks and reference texts, and the differences set against the seeds' spread."""

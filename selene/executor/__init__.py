"""How a stage's parallel steps run (`mappers`: serial, processes, threads, Dask, and the memory budget
a mapper carries) and what a running stage tells the runtime and hears from it (`events`: progress,
live events, stop requests).

Both import nothing heavy: every command loads them.
"""

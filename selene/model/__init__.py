"""The transformer, its shape and its one forward pass, for every caller: training, evaluation,
generation and CUDA-graph decoding. Below the stages: it imports none of them.

Kept free of imports here: the planners read `selene.model.args` and `selene.model.loss_chunks`
without importing torch.
"""

"""Training: plain-PyTorch model, parallelism applied from outside, DCP checkpoints, loop."""

"""Planning: FLOPs, memory and time model, parallel layout search."""

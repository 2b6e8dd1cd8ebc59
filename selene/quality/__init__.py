"""The quality stage: document classifiers (fastText format) and the selection rules that apply them."""

"""The bottom layer: rules and types every other package shares.

Nothing here imports another package of the project (tests/test_layers.py checks it):
errors and the one-line error text, the name registry, budget strings, trial statuses,
metric directions, the model/task interface `IOSpec`, and the serialisable trial specs
and results that cross every layer (CLI -> study -> executor -> train -> store -> reports).
"""

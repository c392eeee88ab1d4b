"""The papers' claims checked side by side: S-Mixer against its SW-MLP twin, HanNet against a plain
MLP on the checkerboard, super-resolution's downsampling (benchmarks/reproductions/README.md)."""

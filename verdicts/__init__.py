"""The statistics of verdicts: which shape wins at a budget, and how sure that is. What
`search compare`, `search run --decide` and a one-seed search's seed checks read:

- `points` and `repeats`: a trials frame's points, a trial's config as a dict, and the
  trials of one configuration read as one (an exact repeat counted once, other seeds merged);
- `candidates`: a family's configurations as arrays, with their seed noise;
- `compare`: the verdicts per budget (`Verdict`, `compare_at`, `compare_replicates`);
- `uncertainty` and `subsampling`: bootstrap draws, intervals, seed noise;
- `thin`: evidence too thin to tell (too few configurations near a budget, a learning
  rate never tried there);
- `front_fit` and `front_reading`: a family's value at a budget, the best within it or
  the front's local fit, and whether it rests on one configuration;
- `undecided`: what deciding an undecided budget would take.

Pure functions on frames and arrays. This package sits below `search` (the engine's
`--decide` and seed checks, the API's `compare`) and `reports` (the pages' verdicts): it
imports `core` alone, never `reports` or `search` (tests/test_layers.py checks it).
"""

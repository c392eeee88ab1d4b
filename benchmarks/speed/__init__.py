"""Wall time, throughput and overhead: the quickstart, the trainers, the models' layers, the
orchestration per trial, the executors, kept weights, big studies (benchmarks/speed/README.md)."""

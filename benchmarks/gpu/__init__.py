"""What a lent GPU measures: the GPU checklist (gpu_checklist.sh), trials sharing a GPU, the LM
trainer's MFU, the pruner's saving in GPU seconds (benchmarks/gpu/README.md)."""

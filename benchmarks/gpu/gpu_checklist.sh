#!/usr/bin/env bash
# The GPU checklist (../shared/gpu-checklist.md) in one command, for a lent GPU machine:
# the device tool runs it in the repository root with the wheels in .whl/ (Optuna,
# SQLAlchemy, alembic, plotly and their small needs; see docs/benchmarks.md "GPU figures")
# and MNIST + Shakespeare in .gpudata/ carried, and $OUT the folder whose files come back.
#   bash benchmarks/gpu/gpu_checklist.sh            # every step, each under its own timeout
#   STEPS="cuda user" bash benchmarks/gpu/gpu_checklist.sh
#   STEPS="cuda user prunework" THROUGHPUT_COMPILE=reduce-overhead ...
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
DATA=${DATA:-$PWD/.gpudata}
STEPS=${STEPS:-"cuda user throughput pack mfu compile diffusion prunework chen"}
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
if [ -d .whl ] && [ -z "${NO_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
log() { echo "=== $* ($(date -u +%H:%M:%S))"; }
log start
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, optuna, sqlalchemy, plotly, pandas; print('torch', torch.__version__, 'optuna', optuna.__version__, 'pandas', pandas.__version__, torch.cuda.get_device_name(0))"
for step in $STEPS; do
  case $step in
    cuda) log "1. pytest -m cuda"
      timeout 80 python3 -m pytest -p no:cacheprovider -m cuda -q -rs tests/tasks/test_cuda.py tests/search/engine/test_cuda_oom.py ;;
    user) log "2. the user's command, shortened"
      rm -rf /tmp/user && mkdir -p /tmp/user
      ( cd /tmp/user && time timeout 120 python3 -m search.cli run --space hourglass --budget 80M \
          --task mnist-denoise --trials 8 --epochs ${USER_EPOCHS:-2} --data-dir "$DATA" \
          --storage sqlite:////tmp/user/search.db --out /tmp/user/report ${USER_EXTRA:-} 2>&1 )
      python3 -m search.cli trials mnist-denoise-hourglass --storage sqlite:////tmp/user/search.db 2>&1 | head -20
      tar -czf "$OUT/user-report.tar.gz" -C /tmp/user report search.db ;;
    throughput) log "3. trainer throughput, ours vs DataLoader"
      timeout 90 python3 -m benchmarks.speed.train_throughput --device cuda --data-dir "$DATA" --repeats 5 --compile ${THROUGHPUT_COMPILE:-}
      timeout 70 python3 -m benchmarks.speed.train_throughput --device cuda --data-dir "$DATA" --repeats 5 --config 785,16,2 --compile ${THROUGHPUT_COMPILE:-} ;;
    pack) log "4. trials sharing one GPU"
      timeout 200 python3 -m benchmarks.gpu.gpu_pack --data-dir "$DATA" --k 1,2,4,8 --packs 4,8,16 --trials 12 --epochs 2 --json "$OUT/gpu-pack.json" ;;
    compile) log "6. the trainer with --compile reduce-overhead against eager, same four trials"
      rm -rf /tmp/cmp && mkdir -p /tmp/cmp
      printf '[hourglass]\nd_z = [785, 1150]\nd_h = [16]\nL = [2, 10]\nlr = [0.001]\n' > /tmp/cmp/grid.toml
      for mode in eager reduce-overhead; do
        extra=""; [ $mode = eager ] || extra="--compile $mode"
        ( cd /tmp/cmp && timeout 150 python3 -m search.cli run --space hourglass --budget 10M --task mnist-denoise \
            --sampler grid --space-file grid.toml --trials 4 --epochs 3 --pruner none --data-dir "$DATA" \
            --storage sqlite:////tmp/cmp/$mode.db --study cmp --no-report --keep none $extra 2>&1 | grep -v "started$" )
      done ;;
    prunework) log "issue 25 on a GPU: the Pareto pruner's saving in GPU seconds against parameter-epochs, same seed"
      rm -rf /tmp/pw && mkdir -p /tmp/pw
      for pruner in pareto none; do
        ( cd /tmp/pw && time timeout 200 python3 -m search.cli run --space hourglass --budget 80M --task mnist-denoise \
            --trials ${PW_TRIALS:-16} --epochs ${PW_EPOCHS:-3} --seed ${PW_SEED:-1} --pruner $pruner --data-dir "$DATA" \
            --storage sqlite:////tmp/pw/$pruner.db --study pw --no-report --keep none 2>&1 | grep -v "started$" )
      done
      tar -czf "$OUT/prunework.tar.gz" -C /tmp/pw pareto.db none.db ;;
    diffusion) log "diffusion backbones at matched parameters (benchmarks/speed/diffusion_backbones.py), patch 4 then 2"
      for patch in 4 2; do
        timeout 150 python3 -m benchmarks.speed.diffusion_backbones --device cuda --batch 128 --steps 20 --repeats 5 \
            --samples 128 --targets ${DIFF_TARGETS:-0.5M,2M,8M} --patch $patch
      done ;;
    mfu) log "5. LM trainer tokens/s and MFU"
      timeout 160 python3 -m benchmarks.gpu.lm_mfu --device cuda --data-dir "$DATA" --json "$OUT/lm-mfu.json" ;;
    chen) log "7. Chen et al. on MNIST at the paper's scale (1.24M to 80M), shortened: trials, epochs and repeats cut"
      # the paper-scale recipes (30 and 50 epochs, 5 repeats, 200 trials) with CHEN_TRIALS trials,
      # CHEN_EPOCHS epochs and CHEN_REPEATS seeds a configuration; the verdicts at four budgets
      # (CHEN_RECIPES="chen-genclass chen-denoise chen-sr" adds generative classification: 4 min more)
      rm -rf /tmp/chen && mkdir -p /tmp/chen
      for recipe in ${CHEN_RECIPES:-chen-denoise chen-sr}; do
        ( cd /tmp/chen && time timeout ${CHEN_TIMEOUT:-240} python3 -m search.cli run --recipe $recipe \
            --trials ${CHEN_TRIALS:-10} --epochs ${CHEN_EPOCHS:-3} --repeats ${CHEN_REPEATS:-2} --data-dir "$DATA" \
            --storage sqlite:////tmp/chen/search.db --study $recipe-gpu --no-report --keep none 2>&1 | grep -v "started$" )
        python3 -m search.cli compare $recipe-gpu --budgets 2.5M,10M,40M,80M --storage sqlite:////tmp/chen/search.db 2>&1
      done
      tar -czf "$OUT/chen.tar.gz" -C /tmp/chen search.db ;;
  esac
done
log end

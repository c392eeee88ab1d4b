"""What each of `search run`'s options does, as `search run --help`, `search.run`'s
docstring and the reference pages say it: the help column of search/engine/run_options.py's
table (`RunOptions`), kept in a file of its own because it is mostly prose."""

from __future__ import annotations

from core.limits import DEFAULT_STORAGE_WAIT_S
from search.artifacts.location import DEFAULT_KEEP, KEEP
from search.engine.pruners import DEFAULT_PRUNER
from search.engine.sampling import SAMPLERS
from search.engine.sampling.policies import (
    CORNERS,
    DEFAULT_CHECK_ORDER,
    DEFAULT_CORNERS,
    DEFAULT_REVISIT,
    DEFAULT_SAMPLER,
    DEFAULT_SCOPE,
    DEFAULT_SEED_CHECKS,
    DEFAULT_SHARE,
    DEFAULT_SIZE_SCALE,
    DEFAULT_SPREAD,
    DEFAULT_START,
    FREE_SHARE_SAMPLER,
    MODELLED_FROM,
    REVISITS,
    SCOPES,
    SHAPE_DRAWS,
    SHARES,
    SIZE_SCALES,
    SPREADS,
    STARTS,
)

DEFAULT_REPORT_DIR = "search-reports"

# option name -> its help (argparse's: '%%' is a literal '%')
HELP: dict[str, str] = {
    # what to search
    "recipe": "a paper experiment by name ('search recipes') or a recipe .toml file; "
    "flags given here override its values",
    "space": "family or comma list, e.g. hourglass,conventional (required without --recipe); --family is the same flag",
    "budget": "max trainable parameters: 500K, 80M, 1.5B, 80000000 (required without --recipe)",
    "task": "task (default: the first family's paper task)",
    "budget_of": "what --budget counts: params (each family's parameter convention, the "
    "default) or omega (connections per layer: mixer, s-mixer, rp-mixer, "
    "sw-mlp; the sparse-MLP paper's fixed quantity)",
    "trials": "finished trials to reach (default 20)",
    "repeats": "seeds per configuration (default 1)",
    "study": "study name (default: TASK-FAMILIES)",
    "seed": "study seed (default 0)",
    "search_repeats": "run K independent searches of the question (studies NAME-r1..NAME-rK, seeds SEED.."
    "SEED+K-1); 'search compare NAME' pools them, with intervals from the spread between "
    "them (default 1)",
    "space_file": "TOML or YAML file overriding the spaces' ranges",
    "smoke": "tiny run: 2 trials, 1 epoch, 512 samples",
    # how to search
    "sampler": f"{', '.join(SAMPLERS.names())} (default {DEFAULT_SAMPLER}, which proposes two trials from one fit "
    f"while its proposals cost more than the trials; {FREE_SHARE_SAMPLER} with --share free "
    f"and several families; auto: the GP while a proposal costs at most a trial's own time, TPE after, for "
    f"trials cheaper than a GP proposal; gp and auto become gp-cond and auto-cond for a space with conditional keys)",
    "spread": f"{', '.join(SPREADS)}: with an Optuna sampler, draw a target size log-uniformly between the "
    f"smallest model and the budget first and aim the config at it, or not (default {DEFAULT_SPREAD})",
    "share": f"{', '.join(SHARES)}: with an Optuna sampler and several families, give the families "
    f"turns, let the sampler choose the family, or give the next trial to the family whose "
    f"last trials most often joined its front (default {DEFAULT_SHARE})",
    "sampler_scope": f"{', '.join(SCOPES)}: with an Optuna sampler and several families, one sampler for the "
    f"study (it ranks every family's trials together) or one per family under the turns (each "
    f"learns from its own family's trials only) (default: family for gp, {DEFAULT_SCOPE} for the others "
    f"and with --share free)",
    "corners": f"{', '.join(CORNERS)}: with an Optuna sampler and --spread size, what a new study trains "
    f"first: each family's smallest model and a model at the budget, the smallest only, "
    f"neither (the sampler's own start), or the smallest first and the budget models as the "
    f"study's last trials (default {DEFAULT_CORNERS})",
    "start": f"{', '.join(STARTS)}: with an Optuna sampler and --spread size, the target sizes of each "
    f"family's random start: spread over its whole size range, or under a cap that rises from "
    f"its smallest model to the budget, so that the first trials are cheap (default {DEFAULT_START})",
    "revisit": f"{', '.join(REVISITS)}: with an Optuna sampler, what a proposal of a configuration the "
    f"study has already trained or pruned gets (its seeds follow from it, so training it again "
    f"recomputes the stored curve): the sampler is told the stored result and proposes again, "
    f"or it is trained again (default {DEFAULT_REVISIT})",
    "shape_draw": f"{', '.join(SHAPE_DRAWS)}: with an Optuna sampler, how each width and depth is drawn: "
    f"as a parameter over the range it may take (under a target size that range moves, so "
    f"a GP sampler leaves it to its random draw), or as its position in that range, which "
    f"the sampler models (default: modelled with gp when --space names several families, "
    f"or one given at least {MODELLED_FROM} trials, else random)",
    "size_scale": f"{', '.join(SIZE_SCALES)}: how an Optuna sampler is told each trial's parameter count "
    f"(its first objective): as counted, or log10 of it, the axis the fronts are drawn and "
    f"measured on (default {DEFAULT_SIZE_SCALE})",
    "pruner": "pareto: stop a trial after an epoch at which a finished trial of its family "
    "with no more parameters was clearly better; rungs: judge at the epochs 1, 3, 9, "
    "27, ... and keep a trial while fewer than a third of its family rank ahead of it "
    "there (non-dominated sorting); checked-rungs: a rung judges a family only "
    "while, replayed on the family's finished trials, it keeps 0.99 of their "
    "front, and the pareto rule judges elsewhere; none: never "
    f"(default {DEFAULT_PRUNER})",
    "prune_grace": "the first epoch at which a trial may be stopped, a fraction of the epochs in (0, 1) "
    "(default: 1/3 for pareto, the first epoch for rungs and checked-rungs)",
    "decide": "comma list of budgets, e.g. 10K,60K: after 20 trials per family (the default search's share), "
    "search where their "
    "verdicts are undecided (trials aimed near them, more seeds where seed noise dominates) until each "
    "is 'better' or 'equivalent', or --trials trials have run",
    "margin": "with --decide: a difference that does not matter, in the metric's units; a budget whose "
    "difference's interval lies inside ±D is decided 'equivalent within ±D'",
    "time_limit": "stop starting trials and seed checks after this much wall time, e.g. 90m, 2h, 1h30m "
    "(trials in flight finish; the same command again resumes, with a limit of its own; default: none)",
    "seed_checks": "with --repeats 1: after the trials, train a second seed of the families' front "
    "configurations, cheapest first, within SHARE of the search's training time, so that its "
    f"verdicts get intervals (default {DEFAULT_SEED_CHECKS:g}; 0: none)",
    "seed_check_order": "which front configurations the seed checks take first: cheapest (the most checks for the "
    "time) or budgets (the one holding each family's value at each budget `search compare` reads by "
    f"default, then the rest cheapest first; default {DEFAULT_CHECK_ORDER})",
    # training
    "epochs": "epochs per trial (default: the task's)",
    "batch_size": "batch size (default: the task's)",
    "optimizer": "adamw (AdamW, linear decay; the default), sgd-step (SGD with momentum "
    "0.9, lr x0.2 at 50/70/90%% of the steps, Yu & Zhang's recipe) or adamw-uvit "
    "(betas 0.9/0.9, warm-up then constant: Hu & Rostami's Table 5)",
    "lr": "learning rate when the space does not search one (default: the task's)",
    "ema": "an exponential moving average of the weights with this decay per step, in [0, 1) "
    "(e.g. 0.9999, U-ViT's); validation, the kept state and the test metrics (sample "
    "quality) use the average (default 0: off; supervised tasks)",
    "ema_warmup": "with --ema: the decay of update n is min(DECAY, (1+n)/(10+n)), as latent-diffusion's "
    "LitEma, so the average forgets the initialisation on a short run (default off, as U-ViT)",
    "compile": "train through torch.compile(mode=MODE): default, reduce-overhead (CUDA graphs: what "
    "pays for small models on a GPU), max-autotune, max-autotune-no-cudagraphs (default: eager)",
    "fuse": "on (the default): a trial's seeds (--repeats) train as one batched program where its "
    "family fuses (hourglass, conventional: about 2-3x fewer seconds per seed on a CPU); "
    "off: one seed after another",
    "device": "auto (cuda when available), cpu, cuda, cuda:1, ...",
    "max_train_samples": "cap the training set (quick looks)",
    "tokens": "training tokens per run (language-model tasks)",
    "data": "a data file the task reads (e.g. a text file for lm-text)",
    "data_dir": "where data sets are (default: $SEARCH_DATA_DIR, then the user cache)",
    "task_option": "task option, e.g. noise=0.5 (repeatable; from Python a dict)",
    # where trials run
    "executor": "where trials run (default: local, on this machine: --workers)",
    "pack": "train up to K trials at once (in this process, or in each Ray task or Tune trial with "
    "--executor ray or tune) as one program, each recorded as if trained alone: on a CPU any shapes and families, "
    "each its own module, nothing padded; on a GPU one family's stacked model (the residual MLPs, any shapes; "
    "han and fcnet, identical shapes); auto (the default) chooses by device: 1 until a pack is measured to pay "
    "(on a CPU, --pack 4 took 1.12x the quickstart's time: docs/results/speed.md)",
    "workers": "the local executor: N trials at once in worker processes (default auto, or $SEARCH_WORKERS: one per "
    "core this process may use on a CPU, 1 on a GPU; 1 without --trial-timeout runs them in this process)",
    "threads": "the local executor: torch threads per trial (default: the usable cores shared among the workers; "
    "workers x threads may not exceed those cores)",
    "retries": "re-runs of a failed or interrupted trial (default 1)",
    "oom_retry": "re-run an out-of-memory trial once with half the batch",
    "ray_address": "with --executor ray or tune: 'auto' or HOST:PORT of a cluster (default: a local Ray)",
    "gpus_per_trial": "with --executor ray or tune: GPUs per trial, e.g. 0.25 packs 4 on a GPU",
    "cpus_per_trial": "with --executor ray or tune: CPUs per trial (default 1)",
    "max_concurrent": "with --executor ray or tune: trials at once (default: what fits)",
    "trial_timeout": "seconds a trial may run, from its start in a worker, before it is stopped and recorded as "
    "failed (a hung trial; the local executor runs trials in worker processes then; not with --executor tune)",
    "tune_dir": "with --executor tune: where Tune's experiment folders go, one per study "
    "(default: beside the SQLite database, search-tune/ for search.db); "
    "tensorboard --logdir DIR/STUDY shows the trials' curves",
    # results
    "storage": "SQLAlchemy URL or SQLite file (default: $SEARCH_STORAGE or sqlite:///search.db)",
    "storage_wait": "seconds to wait for a database that goes away during the search (a restart, a failover) "
    "before stopping; trials in flight go on training and are recorded when it is back "
    f"(default {DEFAULT_STORAGE_WAIT_S:g}; 0: stop at once)",
    "keep": f"whose trained weights are kept: {', '.join(KEEP)} (pareto: the trials on "
    f"their family's Pareto front; a trial that falls off it loses its file; "
    f"default {DEFAULT_KEEP})",
    "artifacts": "where weights are kept: a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX (default: "
    "a folder beside the SQLite database, search-artifacts/ for search.db)",
    "out": f"report folder (default {DEFAULT_REPORT_DIR})",
    "no_report": "do not write the report pages",
    "plugin": "modules or .py files that register your own families and tasks, loaded first "
    "(--plugin, a flag of every command)",
}

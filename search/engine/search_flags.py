"""How a study searches, said as the `search run` flags that set it.

`search run` prints it when a study starts or resumes, so a user sees what the defaults
chose (the sampler, the shape draw and the pruner depend on the families and the trials:
search/engine/sampling/policies.py), and a resumed study says which of them differ from the ones it
was created with: a resume runs with the flags of its own command (the defaults where none
are given), while the study's stored settings stay as created.

`search_settings(spec)` are a study's search settings (stored with a new study by
search/engine/prepare.py `study_settings`); `search_flags(settings, families)` the flags
among them that apply to such a study, as (flag, value); `changed_flags(created,
running, families)` those whose value differs from the stored one (settings a study
created by an older version lacks are not compared).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from search.engine.sampling.policies import unmet_need

if TYPE_CHECKING:
    from search.engine.specs import RunSpec

# settings key -> the `search run` flag that sets it, in the order `search run` says them
FLAGS: dict[str, str] = {
    "sampler": "--sampler",
    "scope": "--sampler-scope",
    "share": "--share",
    "spread": "--spread",
    "size_scale": "--size-scale",
    "shape_draw": "--shape-draw",
    "corners": "--corners",
    "start": "--start",
    "revisit": "--revisit",
    "pruner": "--pruner",
    "prune_grace": "--prune-grace",
    "seed_checks": "--seed-checks",
    "seed_check_order": "--seed-check-order",
    "decide": "--decide",
    "margin": "--margin",
}


def search_settings(spec: RunSpec) -> dict[str, Any]:
    """A `RunSpec`'s search settings, keyed as `FLAGS` (every value resolved: the sampler,
    its scope and the shape draw as the spec's defaults chose them)."""
    return {
        "sampler": spec.sampler,
        "scope": spec.sampler_scope,
        "share": spec.share,
        "spread": spec.spread,
        "size_scale": spec.size_scale,
        "shape_draw": spec.shape_draw,
        "corners": spec.corners,
        "start": spec.start,
        "revisit": spec.revisit,
        "pruner": spec.pruner,
        "prune_grace": spec.prune_grace,
        "seed_checks": spec.seed_checks,
        "seed_check_order": spec.seed_check_order,
        "decide": list(spec.decide) or None,
        "margin": spec.margin,
    }


def applies(key: str, settings: Mapping[str, Any], families: int) -> bool:
    """Whether the setting `key` means something in a study of `families` families searched
    with `settings`."""
    if unmet_need(key, settings.get("sampler"), settings.get("spread"), families) is not None:
        return False
    if key == "seed_check_order":  # says something only where there are checks
        return bool(settings.get("seed_checks")) and settings.get(key) is not None
    if key == "prune_grace":  # the pruner's own grace unless given
        return settings.get("pruner") not in (None, "none") and settings.get("prune_grace") is not None
    return settings.get(key) is not None


def search_flags(settings: Mapping[str, Any], families: int) -> list[tuple[str, Any]]:
    """(flag, value) of each search setting that applies, in `FLAGS`' order."""
    return [(flag, settings[key]) for key, flag in FLAGS.items() if applies(key, settings, families)]


def changed_flags(created: Mapping[str, Any], running: Mapping[str, Any], families: int) -> list[tuple[str, Any]]:
    """(flag, value as created) of each setting that applies to the running search and that
    the study was created with another value of."""

    def compared(key: str) -> bool:  # a grace given at creation differs from the pruner's own grace now
        if key == "prune_grace":
            return running.get("pruner") not in (None, "none")
        return applies(key, running, families)

    return [
        (flag, created[key])
        for key, flag in FLAGS.items()
        if compared(key) and key in created and created[key] != running[key]
    ]


def format_flags(flags: list[tuple[str, Any]]) -> str:
    """ "--sampler gp --pruner pareto"; a value not set reads "unset"."""

    def text(value: Any) -> str:
        if isinstance(value, list):  # --decide's budgets
            from core.budget import format_count

            return ",".join(format_count(v) for v in value)
        return "unset" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    return " ".join(f"{flag} {text(value)}" for flag, value in flags)

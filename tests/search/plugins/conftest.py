"""Each test's own families, tasks and plugins are forgotten after it: the registries,
the metric directions, the loaded plugin files and the checks already run."""

import pytest


def forget_plugins() -> None:
    """Forget every registration that is not built in, and the loaded plugin files."""
    import search.plugins.checks as checks
    import search.plugins.discovery as discovery
    from core.registry import BUILT_IN as BUILT
    from models import FAMILIES
    from search.spaces import SPACES
    from tasks import TASKS

    for registry in (FAMILIES, SPACES, TASKS):
        for name in [n for n in registry.names() if registry.origin(n) != BUILT]:
            registry.remove(name)
    discovery._loaded.clear()
    checks._done.clear()


@pytest.fixture(autouse=True)
def clean_registries():
    import core.directions as directions
    import search.plugins.checks as checks
    import search.plugins.discovery as discovery
    from core.registry import BUILT_IN as BUILT
    from models import FAMILIES
    from search.spaces import SPACES
    from tasks import TASKS

    registries = (FAMILIES, SPACES, TASKS)
    before = [set(r.names()) for r in registries]
    metric_directions = dict(directions.METRIC_DIRECTIONS)
    loaded, done = dict(discovery._loaded), set(checks._done)
    yield
    for registry, names in zip(registries, before):
        for name in set(registry.names()) - names:
            if registry.origin(name) != BUILT:  # built-ins imported lazily during the test stay
                registry.remove(name)
    directions.METRIC_DIRECTIONS.clear()
    directions.METRIC_DIRECTIONS.update(metric_directions)
    discovery._loaded.clear()
    discovery._loaded.update(loaded)
    checks._done.clear()
    checks._done.update(done)

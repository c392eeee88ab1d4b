"""The README and the documentation site (docs/, mkdocs.yml): a README a newcomer reads in
minutes, links that lead somewhere, the data a reading names kept, and every page of the
site's navigation present. `mkdocs build --strict` itself runs in .ci/run (and in the
slow test here where mkdocs is installed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250
GENERATED = {"reference/cli.md", "reference/schema.md"}  # docs/hooks/cli_reference.py writes them at build time


def test_the_readme_is_short_and_keeps_its_two_commands():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "pip install torch==2.13.0 -e . && search run --space hourglass,conventional" in text
    assert "pip install torch==2.13.0 -e '.[test]' && python -m pytest" in text


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
)
def test_local_links_lead_to_files(page):
    path = REPO / page
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if re.match(r"[a-z]+://|#|mailto:", target):
            continue
        file = (path.parent / target.split("#")[0]).resolve()
        generated = file.is_relative_to(REPO / "docs") and str(file.relative_to(REPO / "docs")) in GENERATED
        assert file.exists() or generated, f"{page}: {target}"


def _alternatives(name: str) -> list[str]:
    """`a-{b,c}.json` -> `a-b.json`, `a-c.json` (every brace, nested ones from the inside)."""
    m = re.search(r"\{([^{}]*)\}", name)
    if m is None:
        return [name]
    return [x for alt in m.group(1).split(",") for x in _alternatives(name[: m.start()] + alt + name[m.end() :])]


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
)
def test_every_kept_data_file_a_page_names_is_there(page):
    """A reading's data (docs/data/NAME, braces and * allowed) is in the repository;
    names with a shell variable or a placeholder ($s, SETTING, ...) are commands' outputs."""
    named = set(re.findall(r"docs/data/[\w.{},*/$-]*[\w}*]", (REPO / page).read_text()))
    missing = [
        name
        for pattern in sorted(named)
        if not re.search(r"\$|SETTING|\.\.\.", pattern)
        for name in _alternatives(pattern)
        if not list(REPO.glob(name))
    ]
    assert not missing, f"{page} names data that is not in docs/data: {', '.join(missing)}"


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_page_of_the_navigation_exists_and_every_page_is_in_it():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    assert [p for p in pages if p not in GENERATED and not (REPO / "docs" / p).exists()] == []
    on_disk = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md") if "hooks" not in p.parts}
    assert on_disk - set(pages) == set()


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') is not installed")
    pytest.importorskip("material", reason="the docs extra (pip install -e '.[docs]') is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    assert (site / "reference" / "cli" / "index.html").exists()
    # the Python API page shows every member of search.__all__ (search exports them lazily:
    # each is documented where it is defined), a function with its signature
    import search

    api = (site / "reference" / "python" / "index.html").read_text()
    sections = dict(zip(*[iter(re.split(r'<h2 id="([^"]+)"', api)[1:])] * 2))
    for name in search.__all__:
        section = sections.get(f"search{name.lower()}")
        assert section is not None, f"search.{name} is not on the Python API page"
        if callable(getattr(search, name)) and not isinstance(getattr(search, name), type):
            assert "doc-signature" in section, f"search.{name} has no signature on the Python API page"
    assert collapsed_lists(site) == []


def collapsed_lists(site: Path) -> list[tuple[str, str]]:
    """(page, text) of each paragraph of the built site with a line starting '- ': a list
    Markdown read as a paragraph (no blank line between it and the text above)."""
    out = []
    for page in sorted(site.rglob("*.html")):
        for m in re.finditer(r"<p>((?:(?!<p>|</p>|<div|<pre).)*)</p>", page.read_text(), re.S):
            text = re.sub(r"<[^>]+>", "", m.group(1))
            if re.search(r"(^|\n)\s*- \S", text):
                out.append((str(page.relative_to(site)), text[:80]))
    return out

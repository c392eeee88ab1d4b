"""Cross-references to the notebook (docs/benchmarks.md) are links that land on the section.

The notebook's numbered sections carry short ids (`## 19. Title {#s19}`, attr_list in
mkdocs.yml), and so do the subsections other pages cite by title (`{#s19-hindsight}`). Every
page of the site refers to a section as a link to its id: `[notebook §19](../benchmarks.md#s19)`
from a page one folder down, `[§19](#s19)` inside the notebook. Pure text, no site build: fenced
code blocks and code spans are left out (they are not references), so is docs/data/. The site
uses § for the notebook's sections only.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
NOTEBOOK = DOCS / "benchmarks.md"

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+\{#([\w-]+)\})?\s*$")
# a plain-text pointer into the notebook without a §: "docs/benchmarks.md, section 16",
# 'docs/benchmarks.md, "Database restarts"'
PLAIN_POINTER = re.compile(r"benchmarks\.md`?,?\s+(?:section\s+\d|\")")  # (a § is caught on its own)


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "data" not in p.relative_to(DOCS).parts[:1])


def _blank(match: re.Match) -> str:
    """The same length, newlines kept, so that offsets still give line numbers."""
    return re.sub(r"[^\n]", " ", match.group(0))


def unfenced(path: Path) -> str:
    """The page's text with fenced code blocks blanked out (line numbers kept)."""
    lines, fence = [], None
    for line in path.read_text().splitlines():
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            lines.append("")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def prose(path: Path) -> str:
    """The page's text without fenced code blocks and code spans (line numbers kept)."""
    return CODE_SPAN.sub(_blank, unfenced(path))


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def slugify(text: str) -> str:
    """Python-Markdown toc's default id for a heading without an explicit one."""
    text = re.sub(r"[`*]", "", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def notebook_headings() -> list[tuple[int, str, str, str | None]]:
    """(line, level marks, text, explicit id or None) of each heading of the notebook."""
    text = unfenced(NOTEBOOK)
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = HEADING.match(line)
        if m:
            out.append((number, m.group(1), m.group(2), m.group(3)))
    return out


def notebook_ids() -> set[str]:
    ids, seen = set(), {}
    for _, _, title, explicit in notebook_headings():
        if explicit:
            ids.add(explicit)
            continue
        slug = slugify(title)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}_{n}")
    return ids


def test_every_numbered_section_of_the_notebook_has_its_short_id():
    """`## 19. Title {#s19}` (`## 25 (continued). ... {#s25-continued}`): an id that a
    title's edit does not change, for the links below."""
    wrong = []
    for line, marks, title, explicit in notebook_headings():
        m = re.match(r"(\d+)(\.| \(continued\)\.)", title)
        if marks == "##" and m:
            want = f"s{m.group(1)}" + ("-continued" if "continued" in m.group(2) else "")
            if explicit != want:
                wrong.append(f"docs/benchmarks.md:{line}: '## {title}' wants {{#{want}}}")
    assert not wrong, "\n".join(wrong)
    explicit = [e for *_, e in notebook_headings() if e]
    assert len(explicit) == len(set(explicit)), "an id is given twice"


def test_references_to_the_notebook_are_links():
    """A § (or 'docs/benchmarks.md §N', 'docs/benchmarks.md, "Title"') outside a Markdown
    link is a reference a reader cannot follow: write `[notebook §19](../benchmarks.md#s19)`."""
    plain = []
    for page in pages():
        text = LINK.sub(_blank, prose(page))
        rel = page.relative_to(REPO)
        lines = text.splitlines()
        for m in re.finditer(r"§", text):
            line = line_of(text, m.start())
            plain.append(f"{rel}:{line}: {lines[line - 1].strip()}")
        for m in PLAIN_POINTER.finditer(text):
            plain.append(f"{rel}:{line_of(text, m.start())}: {m.group(0)!r}")
    assert not plain, "references to the notebook that are not links:\n" + "\n".join(plain)


def _targets_notebook(page: Path, target: str) -> tuple[bool, str]:
    path, _, anchor = target.partition("#")
    if re.match(r"[a-z]+://|mailto:", target):
        return False, ""
    if not path:
        return page == NOTEBOOK, anchor
    return (page.parent / path).resolve() == NOTEBOOK, anchor


def test_links_into_the_notebook_land_on_a_heading():
    """Each `benchmarks.md#id` (or `#id` inside the notebook) names a heading's id, and a link
    whose text says §N lands on section N (`#sN`) or one of its subsections (`#sN-...`)."""
    ids = notebook_ids()
    bad = []
    for page in pages():
        text = prose(page)
        rel = page.relative_to(REPO)
        for m in LINK.finditer(text):
            label, target = m.group(1), m.group(2)
            to_notebook, anchor = _targets_notebook(page, target)
            if not to_notebook:
                continue
            where = f"{rel}:{line_of(text, m.start())}: [{' '.join(label.split())}]({target})"
            number = re.search(r"§\s?(\d+)", label)
            if anchor and anchor not in ids:
                bad.append(f"{where}: no heading of docs/benchmarks.md has the id '{anchor}'")
            elif number and not re.fullmatch(rf"s{number.group(1)}(-[\w-]+)?", anchor):
                bad.append(f"{where}: wants #s{number.group(1)} (or #s{number.group(1)}-...)")
            elif "§" in label and not anchor:
                bad.append(f"{where}: wants the section's anchor")
    assert not bad, "\n".join(bad)

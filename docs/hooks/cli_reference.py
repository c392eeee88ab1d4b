"""MkDocs hook: the generated reference pages, written at every build so they cannot drift
from the code: the command reference (reference/cli.md) from `search`'s parser
(search/cli/reference.py) and the database's tables (reference/schema.md) from the schema
(storage/schema_reference.py); and on the Python API page, `search.run`'s keywords from
the one table of run options (search/engine/run_options.py), where the page says
`<!-- search.run options -->`."""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files


def on_files(files: Files, config) -> Files:
    sys.path.insert(0, str(Path(config.config_file_path).resolve().parent))  # this checkout's code, not another's
    from search.cli.reference import cli_reference
    from storage.schema_reference import schema_reference

    for uri, text in (("reference/cli.md", cli_reference()), ("reference/schema.md", schema_reference())):
        files.append(File.generated(config, uri, content=notebook_links(attr_list_safe(text), uri)))
    return files


# "docs/benchmarks.md §32" in the code's help texts: a link to the notebook's section (its
# headings carry the ids s1, s2, ...; tests/test_doc_links.py checks the written pages).
_NOTEBOOK_REF = re.compile(r"`?docs/benchmarks\.md`?,?(\s+)§ ?(\d+)")


def notebook_links(markdown: str, uri: str) -> str:
    to = posixpath.relpath("benchmarks.md", posixpath.dirname(uri) or ".")
    parts = re.split(r"(`[^`\n]*`)", markdown)  # code spans stay as they are
    return "".join(
        part if i % 2 else _NOTEBOOK_REF.sub(lambda m: f"[notebook{m[1]}§{m[2]}]({to}#s{m[2]})", part)
        for i, part in enumerate(parts)
    )


# attr_list (mkdocs.yml; the notebook's section ids, `## 19. Title {#s19}`) reads a ` {...}` that
# ends a heading or a table cell as attributes and drops it ("name -> {mean, std, n}" lost its
# braces): in generated text such braces are escaped, so they stay text.
_TRAILING_BRACES = re.compile(r"(?<= )\{([^{}|\n]*)\}(?=[ ]*(?:\||$))")


def attr_list_safe(markdown: str) -> str:
    return "\n".join(
        _TRAILING_BRACES.sub(r"\\{\1\\}", line) if line.lstrip().startswith(("|", "#")) else line
        for line in markdown.split("\n")
    )


RUN_OPTIONS_MARK = "<!-- search.run options -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if RUN_OPTIONS_MARK not in markdown:
        return markdown
    from search.engine.run_options import options_table

    table = notebook_links(attr_list_safe(options_table()), page.file.src_uri)
    return markdown.replace(RUN_OPTIONS_MARK, table)

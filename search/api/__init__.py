"""The Python API (`import search`): `search.run`, `search.open` and the study handle, the
reading commands' results as objects. The CLI (search/cli/) is a thin layer over it."""

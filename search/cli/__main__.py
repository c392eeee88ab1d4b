"""`python -m search.cli ...`, the same as the `search` command."""

import sys

from search.cli.main import main

sys.exit(main())

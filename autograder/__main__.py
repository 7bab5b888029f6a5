"""``python -m autograder grade <assignment> [--student ID] [--jobs N]`` (see cli.py)."""

import sys

from autograder.cli import main

sys.exit(main())

"""`python -m lasagna.cli`."""

import sys

from lasagna.cli import main

sys.exit(main())

"""`python -m tb_gpu_advisor` runs the command-line interface."""

import sys

from tb_gpu_advisor.cli import main

sys.exit(main())

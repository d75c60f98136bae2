import sys

from konnectz_runner.cli import main

sys.exit(main())

import sys

from konnectz_api.cli import main

sys.exit(main())

import sys

from konnectz_devstack.cli import main

sys.exit(main())

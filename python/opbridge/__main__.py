import sys

from opbridge.cli import main

sys.exit(main())

import sys

from selene.cli import main

sys.exit(main())

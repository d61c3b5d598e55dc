import sys
from pathlib import Path

# The package is used from the source tree (./run.sh also puts it on .venv's path).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

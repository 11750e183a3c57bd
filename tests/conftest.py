import sys
from pathlib import Path

# tests/ helpers (vectors.py, fwtest) importable from every test folder
sys.path.insert(0, str(Path(__file__).resolve().parent))

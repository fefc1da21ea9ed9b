"""Lets test_fonsim.py import compare.py; no bytecode caches in the tree."""

import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

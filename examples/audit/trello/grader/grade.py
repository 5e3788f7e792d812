"""The grader as the Trello experiment shipped it (kept to show its bug).

Given the output folder of one configuration, it grades... only the first run:
`run_dir = run_dirs[0]`. With three run folders it would still read one.
"""

import json
import sys
from pathlib import Path

from rules import accept

config_dir = Path(sys.argv[1])
run_dirs = sorted(p for p in config_dir.iterdir() if p.is_dir())
run_dir = run_dirs[0]  # BUG: the other runs are never read
card = json.loads((run_dir / "card.json").read_text())
print("accepted" if accept(card) else "rejected")

"""The grader fixed: it grades exactly the run folder it is given.

    python grade_fixed.py outputs/baseline/run-1     exit 0 accepted, 1 rejected

`passhat audit DIR --grade "python grader/grade_fixed.py {run_dir}"` calls it
once for every run folder, so no run can be skipped.
"""

import json
import sys
from pathlib import Path

from rules import accept

run_dir = Path(sys.argv[1])
card = json.loads((run_dir / "card.json").read_text())
ok = accept(card)
print("accepted" if ok else "rejected")
sys.exit(0 if ok else 1)

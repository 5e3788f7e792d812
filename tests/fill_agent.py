"""A command agent that writes its `write:` folder full (tests/test_fix54_write_limit.py).

    FILL=FOLDER,MIB python tests/fill_agent.py

Standard library only. It writes MIB mebibytes of zeros to FOLDER/fill, a mebibyte at a
time, and prints one JSON object: how many it wrote and the error that stopped it (its
name), if one did.
"""

from __future__ import annotations

import json
import os

folder, mib = os.environ["FILL"].split(",")
wrote, error = 0, None
try:
    with open(os.path.join(folder, "fill"), "wb") as out:
        for _ in range(int(mib)):
            out.write(b"\0" * (1 << 20))
            out.flush()
            wrote += 1
except OSError as failed:
    error = type(failed).__name__
print(json.dumps({"wrote": wrote, "error": error}))

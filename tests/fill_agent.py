"""A command agent that writes its `write:` folder full (tests/test_fix54_write_limit.py).

    FILL=FOLDER,MIB[,files] python tests/fill_agent.py

Standard library only. It writes MIB mebibytes of zeros to FOLDER/fill, a mebibyte at a
time (with `files`: each mebibyte to a file of its own, FOLDER/fill-N, 20 ms apart, so no
one file's size limit stops it), and prints one JSON object: how many it wrote and the
error that stopped it (its name), if one did.
"""

from __future__ import annotations

import json
import os
import time

folder, mib, *files = os.environ["FILL"].split(",")
wrote, error = 0, None
if files:
    for n in range(int(mib)):
        with open(os.path.join(folder, f"fill-{n}"), "wb") as out:
            out.write(b"\0" * (1 << 20))
        wrote += 1
        time.sleep(0.02)
    print(json.dumps({"wrote": wrote, "error": None}))
    raise SystemExit
try:
    with open(os.path.join(folder, "fill"), "wb") as out:
        for _ in range(int(mib)):
            out.write(b"\0" * (1 << 20))
            out.flush()
            wrote += 1
except OSError as failed:
    error = type(failed).__name__
print(json.dumps({"wrote": wrote, "error": error}))

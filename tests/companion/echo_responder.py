"""A command responder for the many-workers tests (run by each worker as a real program): it
answers "got" and the message's tokens (`c1-m2`) in the order written, so a test can tell
which messages a reply answers.

`FOLDER/slow`, when present, is taken (renamed: of several workers exactly one wins) by the
first draft whose message holds SLOW: that draft writes its worker's pid (its parent) to
`FOLDER/drafting` and waits until `FOLDER/go` exists (30 s at most), so a test can kill the
worker mid-turn. A second argument is a pause before every answer, in seconds.
"""

import os
import re
import sys
import time
from pathlib import Path

folder = Path(sys.argv[1])
prompt = sys.stdin.read()
message = prompt.split("They wrote:", 1)[-1]
if "SLOW" in message:
    try:
        (folder / "slow").rename(folder / "slow.taken")
    except OSError:
        pass
    else:
        (folder / "drafting.new").write_text(str(os.getppid()))
        (folder / "drafting.new").rename(folder / "drafting")
        deadline = time.monotonic() + 30
        while not (folder / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
if len(sys.argv) > 2:  # a model's thinking time, in seconds (the benchmark)
    time.sleep(float(sys.argv[2]))
tokens = re.findall(r"\b[a-z]+\d+-m\d+\b", message)
print("got " + " ".join(tokens) if tokens else "ok")

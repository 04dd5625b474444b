"""Reading the bench JSON a device script left, for its table (imported by
the session-13 scripts' tables: sys.path gets tools/dev first)."""

import glob
import json
import os
import statistics


def records(path):
    """The file's records; none (and a line saying why) for a step that
    failed or left a partial file."""
    try:
        return json.load(open(path))["records"]
    except Exception as e:
        print(f"# {os.path.basename(path)}: {e}")
        return []


def peer_medians(pattern, key):
    """Median ms over the files matching `pattern` (one per round) of the
    event-timed records, grouped by key(record)."""
    times = {}
    for f in glob.glob(pattern):
        for r in records(f):
            if "ms" in r and r.get("variant", "") == "":
                times.setdefault(key(r), []).append(r["ms"])
    return {k: statistics.median(v) for k, v in times.items()}, times

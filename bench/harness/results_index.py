"""bench/results/<gpu>/<suite>.json: the latest run of each suite per GPU
kind, and the index of them in bench/results/README.md."""

import glob
import json
import os

from harness import chart

BEGIN = "<!-- index: written by bench/device.py save -->"
END = "<!-- end of index -->"
# Fields of a run that every suite file of it repeats.
RUN_FIELDS = ("harness", "command", "gpu", "device", "started", "quick",
              "stage")


def suite_file(results, name):
    data = {"suite": name}
    data.update({k: results[k] for k in RUN_FIELDS if k in results})
    data.update(results["suites"][name])
    return data


def save(run_dir, into):
    with open(os.path.join(run_dir, "results.json")) as f:
        results = json.load(f)
    gpu_dir = os.path.join(into, results["gpu"])
    os.makedirs(gpu_dir, exist_ok=True)
    for name in results["suites"]:
        data = suite_file(results, name)
        stem = os.path.join(gpu_dir, name)
        with open(stem + ".json", "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        note = chart.draw(data["records"], stem, "{} {} ({})".format(
            results["gpu"], name, results.get("started", "")[:10]))
        print("{}.json: {}; {}".format(stem, data.get("status"), note))
    write_index(into)
    return 0


def index_rows(into):
    rows = []
    for path in sorted(glob.glob(os.path.join(into, "*", "*.json"))):
        with open(path) as f:
            data = json.load(f)
        stage = data.get("stage", {})
        origin = data.get("from", {})
        rows.append("| `{}` | {} | {} | {} | {} | {} |".format(
            os.path.relpath(path, into), data.get("device", {}).get("name",
                                                                    "?"),
            (data.get("started") or origin.get("date", "?"))[:10],
            (stage.get("commit") or origin.get("commit", "?"))[:10],
            data.get("status", "?"),
            "`{}`".format(data["command"]) if "command" in data and
            "harness" in data else origin.get("what", "")))
    return rows


def write_index(into):
    """Rewrites the table between BEGIN and END of README.md."""
    readme = os.path.join(into, "README.md")
    with open(readme) as f:
        text = f.read()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    table = ["| file | card | date | commit | status | made by |",
             "| --- | --- | --- | --- | --- | --- |"] + index_rows(into)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + "\n".join(table) + "\n" + END + tail)

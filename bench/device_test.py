#!/usr/bin/env python3
"""The device harness's parts that need no GPU: the suite table, log
verdicts, ratios, the plain SVG chart, staging's file list and save."""

import json
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import device  # noqa: E402
from harness import chart, report, results_index, stage, steps  # noqa: E402
from harness import suites  # noqa: E402


def record(impl, ms, size="4096^3", kernel="gemm"):
    return {"kernel": kernel, "impl": impl, "pass": "fwd", "variant": "NN",
            "dtype": "f16", "size": size, "ms": ms, "flops": 1e12,
            "tflops": 1e12 / ms / 1e9}


class SuiteTable(unittest.TestCase):
    def test_every_suite_builds_steps_with_unique_names(self):
        for name in suites.NAMES:
            names = [s.name for s in suites.steps(name, "/b")]
            self.assertEqual(len(names), len(set(names)), name)
            if name != "tests":
                self.assertTrue(names, name)

    def test_every_peers_step_parses(self):
        # peers.py's flags as each suite passes them (two sections once
        # added the same flag: argparse refused all of peers.py on the GPU).
        import peers
        for name in suites.NAMES:
            for s in suites.steps(name, "/b"):
                if s.kind != "peers":
                    continue
                at = next(i for i, a in enumerate(s.argv)
                          if a.endswith("peers.py"))
                argv = sys.argv
                try:
                    sys.argv = ["peers.py"] + [a.replace("{json}", "x.json")
                                               for a in s.argv[at + 1:]]
                    peers.parse_args()
                finally:
                    sys.argv = argv

    def test_peers_label_every_shape_they_time(self):
        import peers
        self.assertEqual(peers.size_label(
            {"G": 8, "rows": 756, "max_rows": 169, "N": 4096, "K": 4096}),
            "G8 rows756 N4096 K4096")
        self.assertEqual(peers.size_label({"M": 8, "N": 8, "K": 8}), "8^3")

    def test_tessel_runs_before_its_peers(self):
        for name in ("gemm", "attention", "rows", "linear-attention",
                     "decode"):
            kinds = [s.name.startswith("peers") for s in
                     suites.steps(name, "")]
            self.assertEqual(kinds, sorted(kinds), name)

    def test_quick_shortens_the_peers_and_leaves_seeds_out(self):
        peers = suites.steps("rows", "")[-1]
        self.assertIn("--rep-ms", peers.command(quick=True))
        self.assertNotIn("--rep-ms", peers.command(quick=False))
        fuzz = [s.command(quick=True) for s in suites.steps("fuzz", "")]
        self.assertIn(None, fuzz)

    def test_decode_runs_the_sample_and_its_peers(self):
        names = [s.name for s in suites.steps("decode", "")]
        self.assertEqual(names, ["tessel_decode_attention",
                                 "tessel_mla_decode", "peers_decode"])
        self.assertEqual(suites.binaries("decode"),
                         ["samples/decode_attention", "samples/mla_decode"])
        peers = suites.steps("decode", "")[-1].command(quick=True)
        self.assertIn("decode", peers)
        self.assertIn("--decode-shapes", peers)

    def test_binaries_are_build_relative(self):
        self.assertEqual(suites.binaries("rows"),
                         ["samples/rmsnorm", "samples/softmax",
                          "samples/layernorm"])
        self.assertIn("tests/fuzz/tessel_random_gpu_test",
                      suites.binaries("sanitizers"))

    def test_unknown_and_missing_suites_are_refused(self):
        for bad in (["run", "mla"], ["run", "gemmm"]):
            with self.assertRaises(SystemExit):
                device.parse_args(bad)
        self.assertEqual(device.parse_args(["run", "decode"]).suites,
                         ["decode"])
        self.assertNotIn("decode", suites.DEFAULT)
        self.assertEqual(device.parse_args(["run"]).suites, suites.DEFAULT)


class Verdicts(unittest.TestCase):
    def test_gpu_kind(self):
        self.assertEqual(steps.gpu_kind("NVIDIA H100 80GB HBM3"), "h100")
        self.assertEqual(steps.gpu_kind("NVIDIA H200"), "h200")
        self.assertEqual(steps.gpu_kind("NVIDIA A100-SXM4-80GB"), "a100")
        self.assertEqual(steps.gpu_kind(""), "unknown-gpu")

    def test_gtest_counts_and_verdict(self):
        log = ("[  PASSED  ] 230 tests.\n[  SKIPPED ] 1 test, listed below:"
               "\n[  FAILED  ] 15 tests, listed below:\n")
        self.assertEqual(steps.gtest_counts(log),
                         {"passed": 230, "failed": 15, "skipped": 1})
        gtest = suites.Step("t", "gtest", [])
        self.assertFalse(steps.verdict(gtest, 0, log, None)[0])
        self.assertTrue(steps.verdict(gtest, 0, "[  PASSED  ] 3 tests.",
                                      None)[0])
        self.assertFalse(steps.verdict(gtest, 0, "no tests", None)[0])

    def test_sanitizer_verdict_needs_zero_errors(self):
        san = suites.Step("s", "sanitizer", [])
        ok = "========= ERROR SUMMARY: 0 errors\n"
        self.assertTrue(steps.verdict(san, 0, ok, None)[0])
        self.assertFalse(steps.verdict(san, 99, "ERROR SUMMARY: 2 errors",
                                       None)[0])
        self.assertFalse(steps.verdict(san, 0, "crashed", None)[0])
        # racecheck words its summary otherwise (the H100 run of 2026-12-07
        # called four clean racechecks failures).
        race = "========= RACECHECK SUMMARY: {} hazards displayed ({} errors, 0 warnings)"
        self.assertTrue(steps.verdict(san, 0, race.format(0, 0), None)[0])
        self.assertFalse(steps.verdict(san, 0, race.format(3, 2), None)[0])

    def test_bench_verdict_needs_its_json(self):
        bench = suites.Step("b", "bench", [])
        self.assertFalse(steps.verdict(bench, 0, "", None)[0])
        passed, facts = steps.verdict(
            bench, 0, "", {"records": [record("tessel", 1.0), {"error": "x"}]})
        self.assertTrue(passed)
        self.assertEqual(facts["error_records"], 1)


class Ratios(unittest.TestCase):
    def test_compare_pairs_equal_labels_only(self):
        records = [record("tessel", 0.2), record("cublas", 0.19),
                   record("cublas", 1.0, size="8192^3"),
                   record("torch_sdpa:cudnn", 0.1)]
        (c,) = report.compare(records)
        self.assertEqual(c["peer"], "cublas")
        self.assertAlmostEqual(c["ratio"], 0.95)
        self.assertTrue(c["meets_goal"])
        self.assertIn("goal 0.95 met", report.comparison_lines([c])[0])


class Charts(unittest.TestCase):
    def test_plain_svg_is_xml_with_one_line_per_series(self):
        records = [record("tessel", 0.2), record("cublas", 0.19),
                   record("tessel", 1.6, size="8192^3"),
                   record("tessel:detail", 0.1)]
        svg = chart.plain_svg(chart.panels(records), "title")
        root = ElementTree.fromstring(svg)
        lines = root.findall("{http://www.w3.org/2000/svg}polyline")
        self.assertEqual(len(lines), 2)


class RunWithoutGpu(unittest.TestCase):
    """run() over stand-in binaries: the JSON, verdicts, budget, logs."""

    def test_run_records_every_step(self):
        with tempfile.TemporaryDirectory() as tmp:
            bench = os.path.join(tmp, "bench.sh")
            with open(bench, "w") as f:
                f.write('#!/bin/sh\necho \'{"records": [{"kernel": "gemm", '
                        '"impl": "tessel", "size": "4096^3", "ms": 0.2, '
                        '"tflops": 687}]}\' > "$1"\n')
            gtest = os.path.join(tmp, "gtest.sh")
            with open(gtest, "w") as f:
                f.write("#!/bin/sh\necho '[  PASSED  ] 2 tests.'\n"
                        "echo '[  FAILED  ] 1 test, listed below:'\n"
                        "exit 1\n")
            for script in (bench, gtest):
                os.chmod(script, 0o755)
            fake = [suites.Step("bench", "bench", [bench, "{json}"]),
                    suites.Step("gtest", "gtest", [gtest]),
                    suites.Step("quick_only", "gtest", [gtest], suites.SKIP)]
            saved = suites.steps
            suites.steps = lambda name, build: fake
            try:
                args = device.parse_args(["run", "gemm", "--build", tmp,
                                          "--out", tmp, "--quick"])
                self.assertEqual(device.run(args), 1)
            finally:
                suites.steps = saved
            gpu_dir = os.path.join(tmp, steps.gpu_kind(
                steps.query_device().get("name")))
            with open(os.path.join(gpu_dir, "results.json")) as f:
                results = json.load(f)
            suite = results["suites"]["gemm"]
            self.assertEqual(suite["status"], "FAIL")
            self.assertEqual([s["passed"] for s in suite["steps"]],
                             [True, False])
            self.assertEqual(suite["steps"][1]["tests"]["failed"], 1)
            self.assertEqual(suite["left_out"], ["quick_only"])
            self.assertEqual(suite["records"][0]["source"], "bench")
            self.assertTrue(os.path.exists(os.path.join(gpu_dir, "logs.tgz")))
            self.assertTrue(os.path.exists(os.path.join(gpu_dir,
                                                        "results.svg")))

    def test_budget_skips_the_steps_that_would_start_late(self):
        args = device.parse_args(["run", "gemm"])
        for suite in device.run_suite("gemm", args, "/none", {}, "/tmp", 0):
            pass
        self.assertEqual(suite["status"], "incomplete")
        self.assertTrue(all(s["rc"] == "skipped: budget"
                            for s in suite["steps"]))


class StageAndSave(unittest.TestCase):
    def test_wanted_reports_missing_binaries(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "samples"))
            open(os.path.join(build, "samples", "rmsnorm"), "w").close()
            found, missing = stage.wanted(["rows"], build)
            self.assertEqual(found, ["samples/rmsnorm"])
            self.assertEqual(missing, ["samples/softmax", "samples/layernorm"])

    def test_save_files_each_suite_and_indexes_it(self):
        run = {"harness": "bench/device.py", "command": "bench/device.py run "
               "gemm", "gpu": "h100", "device": {"name": "NVIDIA H100"},
               "started": "2026-12-07T06:00:00", "stage": {"commit": "abc"},
               "suites": {"gemm": {"status": "pass", "steps": [],
                                   "records": [record("tessel", 0.2)]}}}
        with tempfile.TemporaryDirectory() as tmp:
            run_dir, into = os.path.join(tmp, "out"), os.path.join(tmp, "r")
            os.makedirs(run_dir)
            os.makedirs(into)
            with open(os.path.join(run_dir, "results.json"), "w") as f:
                json.dump(run, f)
            with open(os.path.join(into, "README.md"), "w") as f:
                f.write("intro\n{}\nold\n{}\nend\n".format(
                    results_index.BEGIN, results_index.END))
            results_index.save(run_dir, into)
            with open(os.path.join(into, "h100", "gemm.json")) as f:
                saved = json.load(f)
            self.assertEqual(saved["suite"], "gemm")
            self.assertEqual(saved["stage"]["commit"], "abc")
            self.assertTrue(os.path.exists(os.path.join(into, "h100",
                                                        "gemm.svg")))
            with open(os.path.join(into, "README.md")) as f:
                text = f.read()
            self.assertIn("| `h100/gemm.json` | NVIDIA H100 | 2026-12-07 |",
                          text)
            self.assertNotIn("old", text)
            self.assertTrue(text.endswith("end\n"))


if __name__ == "__main__":
    unittest.main()

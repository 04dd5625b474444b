"""The device-run harness behind bench/device.py (docs/benchmarks.md).

suites.py  what each suite runs, in order, and the binaries it needs
steps.py   running one step on the GPU machine: environment, log, verdict
report.py  tessel-vs-peer ratios and the printed tables
chart.py   the chart (matplotlib where it imports, else plain SVG)
stage.py   copying the binaries a run needs out of the build folder
"""

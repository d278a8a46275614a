"""Counts CTest's results from its console output (read on stdin).

Prints "PASSED FAILED SKIPPED". The console output is used rather than
--output-junit because CTest's JUnit file reports a test whose executable is
missing ("Not Run", which CTest counts as a failure) as merely skipped.

Each finished test prints one line such as
    12/40 Test #12: Tensor.Add ........................   Passed    0.01 sec
    13/40 Test #13: lit ...............................***Failed    2.10 sec
    14/40 Test #14: Cuda.Launch .......................***Skipped   0.00 sec
    15/40 Test #15: Old.Thing .........................***Not Run (Disabled)   0.00 sec
Passed is a pass; Skipped (GTEST_SKIP, SKIP_RETURN_CODE, ...) and Disabled are
skips; everything else (Failed, Timeout, Exception, Not Run) is a failure.
CTest's own "N tests failed out of M" line, when present, is checked against
these counts, and the larger failure count wins.
"""
import re
import sys

RESULT = re.compile(
    r"^\s*\d+/\d+ Test\s+#\d+: .*? (?:\.+|\s)\s*(?P<status>\*{3}.*?|Passed)\s+[\d.]+ sec\s*$")
SUMMARY = re.compile(r"^\d+% tests passed, (?P<failed>\d+) tests? failed out of \d+")

passed = failed = skipped = 0
summary_failed = None
for line in sys.stdin:
    line = line.rstrip("\n")
    match = RESULT.match(line)
    if match:
        status = match.group("status").lstrip("*").strip()
        if status == "Passed":
            passed += 1
        elif status == "Skipped" or status.startswith("Not Run (Disabled)"):
            skipped += 1
        else:
            failed += 1
        continue
    match = SUMMARY.match(line)
    if match:
        summary_failed = int(match.group("failed"))

if summary_failed is not None and summary_failed > failed:
    failed = summary_failed
print(passed, failed, skipped)

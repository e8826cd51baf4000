"""Baseline for the `trace` bench: the time Python's `json.loads` takes on every line of
a JSONL file (the least any Python trace checker has to spend). The lines are read into
memory first; only the loop is timed. Prints the seconds as one number.

Run: python3 analyzer/benches/json_loads_baseline.py TRACE.jsonl
"""

import json
import sys
import time


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as trace:
        lines = trace.readlines()
    loads = json.loads
    start = time.perf_counter()
    for line in lines:
        loads(line)
    print(f"{time.perf_counter() - start:.3f}")


if __name__ == "__main__":
    main()

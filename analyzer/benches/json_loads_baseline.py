"""Baseline for the `trace` bench: a Python process that reads a JSONL file line by line
and `json.loads` every line (the least any Python trace checker has to do). The bench
times the whole process, as it times syncguard's; the script prints the seconds of its
own read-and-parse loop as well.

Run: python3 analyzer/benches/json_loads_baseline.py TRACE.jsonl
"""

import json
import sys
import time


def main() -> None:
    loads = json.loads
    start = time.perf_counter()
    with open(sys.argv[1], encoding="utf-8") as trace:
        for line in trace:
            loads(line)
    print(f"{time.perf_counter() - start:.3f}")


if __name__ == "__main__":
    main()

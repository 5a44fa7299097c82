"""Generate the deterministic synthetic text corpus used by perf_workload.py.

Usage: python3 make_corpus.py OUT_PATH [BYTES]   (default 120,000,000 bytes)
"""
import random
import sys

random.seed(42)
SYLL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "ph", "th", "an", "er", "in", "on"]
words = ["".join(random.choice(SYLL) for _ in range(random.randint(1, 4))) for _ in range(5000)]
target = int(sys.argv[2]) if len(sys.argv) > 2 else 120_000_000
with open(sys.argv[1], "w") as f:
    n = 0
    while n < target:
        line = " ".join(random.choice(words) for _ in range(random.randint(3, 15))) + f" {random.randint(0, 10**6)}\n"
        f.write(line)
        n += len(line)

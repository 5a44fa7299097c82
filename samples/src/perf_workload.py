"""Word-index workload used to record samples/perf-python-wordindex.folded.

Reads a text corpus, tokenizes it with a regex, counts words, sorts,
round-trips the index through JSON, hashes and compresses chunks, and
builds/walks a small recursive tree. Intended to run for ~8 seconds on
a 2-vCPU machine so `perf record` sees a mix of interpreter, C-extension
(re, json, zlib, hashlib, list.sort) and kernel frames.

Usage: python3 perf_workload.py CORPUS [MAX_BYTES]
"""
import collections
import hashlib
import json
import re
import sys
import zlib

TOKEN_RE = re.compile(r"[a-z]+|\d+")


def read_corpus(path, max_bytes):
    with open(path, "r", encoding="ascii") as f:
        return f.read(max_bytes)


def tokenize(text):
    return TOKEN_RE.findall(text)


def count_words(tokens):
    counts = collections.Counter()
    for tok in tokens:
        if not tok.isdigit():
            counts[tok] += 1
    return counts


def rank(counts):
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def json_roundtrip(ranked, rounds):
    total = 0
    for _ in range(rounds):
        blob = json.dumps([{"word": w, "n": n, "len": len(w)} for w, n in ranked])
        total += len(json.loads(blob))
    return total


def digest_chunks(text, chunk):
    out = []
    for i in range(0, len(text), chunk):
        piece = text[i : i + chunk].encode()
        out.append((hashlib.sha256(piece).hexdigest()[:8], len(zlib.compress(piece, 1))))
    return out


def build_tree(words, depth):
    # Recursive binary partition of the sorted vocabulary.
    if depth == 0 or len(words) <= 2:
        return {"leaf": words}
    mid = len(words) // 2
    return {"left": build_tree(words[:mid], depth - 1), "right": build_tree(words[mid:], depth - 1)}


def walk(node):
    if "leaf" in node:
        return sum(len(w) for w in node["leaf"])
    return walk(node["left"]) + walk(node["right"])


def main():
    path = sys.argv[1]
    max_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 30_000_000
    text = read_corpus(path, max_bytes)
    tokens = tokenize(text)
    counts = count_words(tokens)
    ranked = rank(counts)
    n_json = json_roundtrip(ranked, 60)
    digests = digest_chunks(text, 1 << 16)
    vocab = sorted(counts)
    tree_total = sum(walk(build_tree(vocab, d)) for d in range(4, 14))
    numbers = sorted(int(t) for t in tokens if t.isdigit())
    print(
        f"bytes={len(text)} tokens={len(tokens)} vocab={len(counts)} "
        f"json={n_json} chunks={len(digests)} tree={tree_total} "
        f"median={numbers[len(numbers) // 2]}"
    )


if __name__ == "__main__":
    main()

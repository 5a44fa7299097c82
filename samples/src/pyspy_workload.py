"""Order-report workload used to record samples/pyspy-orders-report.folded.

A small, deterministic "batch job":
  1. generate synthetic orders and serialize them as JSON lines,
  2. parse the JSON back and validate fields with regular expressions,
  3. evaluate a per-order pricing formula with a recursive-descent parser,
  4. aggregate per customer / per SKU and sort the results,
  5. render a text report.
Runs for roughly 5 seconds on a 2-vCPU machine.

Usage: python3 pyspy_workload.py [N_ORDERS]
"""
import json
import random
import re
import sys
from collections import defaultdict

EMAIL_RE = re.compile(r"^[a-z0-9._]+@[a-z0-9-]+\.(com|org|net)$")
SKU_RE = re.compile(r"^[A-Z]{3}-\d{4}$")
DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$")
TOKEN_RE = re.compile(r"\s*(?:(\d+\.\d+|\d+)|(.))")

FORMULAS = [
    "qty * price",
    "qty * price * (1 - discount)",
    "(qty * price + shipping) * (1 + tax)",
    "qty * (price - discount * price) + shipping * (qty > 10 ? 0 : 1)",
    "((qty * price) - (qty * price * discount)) * (1 + tax) + shipping",
]


# ---------------------------------------------------------------- generation
def make_customer(rng, i):
    name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))
    return {"id": i, "email": f"{name}.{i}@{rng.choice(['shop', 'mail', 'corp-x'])}.{rng.choice(['com', 'org', 'net'])}"}


def make_order(rng, i, customers):
    lines = []
    for _ in range(rng.randint(1, 6)):
        lines.append(
            {
                "sku": f"{rng.choice(['ABC', 'XYZ', 'QRS', 'LMN', 'TUV'])}-{rng.randint(0, 9999):04d}",
                "qty": rng.randint(1, 25),
                "price": round(rng.uniform(0.5, 250.0), 2),
                "discount": rng.choice([0, 0, 0.05, 0.1, 0.2]),
                "formula": rng.choice(FORMULAS),
            }
        )
    return {
        "order_id": i,
        "customer": rng.choice(customers),
        "created": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
        "shipping": round(rng.uniform(0, 15), 2),
        "tax": rng.choice([0.0, 0.07, 0.19, 0.21]),
        "lines": lines,
    }


def generate_jsonl(n, seed=7):
    rng = random.Random(seed)
    customers = [make_customer(rng, i) for i in range(500)]
    return "\n".join(json.dumps(make_order(rng, i, customers)) for i in range(n))


# ------------------------------------------------------------ parsing/validation
def parse_orders(blob):
    return [json.loads(line) for line in blob.splitlines()]


def validate(order):
    if not EMAIL_RE.match(order["customer"]["email"]):
        return False
    if not DATE_RE.match(order["created"]):
        return False
    return all(SKU_RE.match(line["sku"]) for line in order["lines"])


# ------------------------------------------------- recursive-descent evaluator
def tokenize(src):
    tokens = []
    for number, op in TOKEN_RE.findall(src):
        if number:
            tokens.append(("num", float(number)))
        elif op.strip():
            tokens.append(("op", op))
    # identifiers are single letters glued together by the regex; re-join them
    merged = []
    for kind, val in tokens:
        if kind == "op" and val.isalpha() and merged and merged[-1][0] == "name":
            merged[-1] = ("name", merged[-1][1] + val)
        elif kind == "op" and val.isalpha():
            merged.append(("name", val))
        else:
            merged.append((kind, val))
    return merged


class Parser:
    def __init__(self, tokens, env):
        self.tokens = tokens
        self.pos = 0
        self.env = env

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def take(self):
        tok = self.peek()
        self.pos += 1
        return tok

    def parse_ternary(self):
        cond = self.parse_compare()
        if self.peek() == ("op", "?"):
            self.take()
            a = self.parse_ternary()
            self.take()  # ':'
            b = self.parse_ternary()
            return a if cond else b
        return cond

    def parse_compare(self):
        left = self.parse_sum()
        if self.peek() in (("op", ">"), ("op", "<")):
            op = self.take()[1]
            right = self.parse_sum()
            return float(left > right) if op == ">" else float(left < right)
        return left

    def parse_sum(self):
        value = self.parse_product()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            rhs = self.parse_product()
            value = value + rhs if op == "+" else value - rhs
        return value

    def parse_product(self):
        value = self.parse_atom()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            rhs = self.parse_atom()
            value = value * rhs if op == "*" else value / rhs
        return value

    def parse_atom(self):
        kind, val = self.take()
        if kind == "num":
            return val
        if kind == "name":
            return self.env[val]
        if val == "(":
            inner = self.parse_ternary()
            self.take()  # ')'
            return inner
        raise ValueError(f"unexpected token {val!r}")


def line_total(order, line):
    env = {
        "qty": line["qty"],
        "price": line["price"],
        "discount": line["discount"],
        "shipping": order["shipping"],
        "tax": order["tax"],
    }
    return Parser(tokenize(line["formula"]), env).parse_ternary()


# ---------------------------------------------------------------- aggregation
def aggregate(orders):
    per_customer = defaultdict(float)
    per_sku = defaultdict(lambda: [0, 0.0])
    per_month = defaultdict(float)
    for order in orders:
        total = sum(line_total(order, line) for line in order["lines"])
        per_customer[order["customer"]["email"]] += total
        per_month[order["created"][:7]] += total
        for line in order["lines"]:
            entry = per_sku[line["sku"]]
            entry[0] += line["qty"]
            entry[1] += line["qty"] * line["price"]
    return per_customer, per_sku, per_month


def fib(n):
    # deliberately naive: a small, visibly recursive hot spot
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def render_report(per_customer, per_sku, per_month, top=20):
    out = ["== top customers =="]
    for email, total in sorted(per_customer.items(), key=lambda kv: kv[1], reverse=True)[:top]:
        out.append(f"{email:40s} {total:14.2f}")
    out.append("== top skus by revenue ==")
    for sku, (qty, rev) in sorted(per_sku.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]:
        out.append(f"{sku:10s} {qty:8d} {rev:14.2f}")
    out.append("== months ==")
    for month in sorted(per_month):
        out.append(f"{month} {per_month[month]:14.2f}")
    return "\n".join(out)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 35000
    blob = generate_jsonl(n)
    orders = parse_orders(blob)
    valid = [o for o in orders if validate(o)]
    report = render_report(*aggregate(valid))
    checksum = fib(25)
    print(report.splitlines()[1])
    print(f"orders={len(orders)} valid={len(valid)} report_lines={len(report.splitlines())} fib={checksum}")


if __name__ == "__main__":
    main()

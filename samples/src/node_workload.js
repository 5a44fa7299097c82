'use strict';
// Inventory-sync workload profiled for samples/node-inventory-sync.cpuprofile.
//
// A small, deterministic batch job in plain Node.js (no dependencies):
//   1. generate a seeded catalogue of products and stock events,
//   2. serialize them to JSON and parse them back (JSON.stringify / JSON.parse),
//   3. validate and extract fields with regular expressions,
//   4. apply the events to an in-memory inventory held in Maps,
//   5. sort products several ways (Array.prototype.sort with comparators),
//   6. evaluate bundle prices over a recursive product tree, and run a
//      recursive memo-free Fibonacci and a recursive merge sort,
//   7. render a small text report.
// Runs for roughly 3 seconds on a 2-vCPU machine.
//
// Usage: node node_workload.js [N_PRODUCTS]

const N = Number(process.argv[2] || 20000);

// ---------------------------------------------------------------- rng
function mulberry32(seed) {
  return function next() {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(42);
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
const randInt = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

// ---------------------------------------------------------- generation
const CATEGORIES = ['tools', 'garden', 'kitchen', 'toys', 'books', 'audio', 'office', 'sports'];
const COLORS = ['red', 'green', 'blue', 'black', 'white', 'oak', 'steel'];
const WORDS = ['ultra', 'mini', 'pro', 'classic', 'smart', 'eco', 'max', 'lite', 'plus', 'neo'];

function makeProduct(i) {
  const name = `${pick(WORDS)} ${pick(WORDS)} ${pick(CATEGORIES).slice(0, -1)} ${randInt(1, 999)}`;
  return {
    sku: `${pick(CATEGORIES).slice(0, 3).toUpperCase()}-${String(i).padStart(6, '0')}`,
    name,
    category: pick(CATEGORIES),
    color: pick(COLORS),
    price: Math.round(rand() * 50000) / 100,
    weight: `${(rand() * 20).toFixed(2)}kg`,
    dims: `${randInt(1, 200)}x${randInt(1, 200)}x${randInt(1, 200)}cm`,
    supplier: `supplier-${randInt(1, 300)}@vendors.example`,
    tags: Array.from({ length: randInt(1, 5) }, () => pick(WORDS)),
    parts: [],
  };
}

function makeEvents(products, count) {
  const events = [];
  for (let i = 0; i < count; i++) {
    const p = pick(products);
    const kind = pick(['receive', 'ship', 'ship', 'adjust', 'return']);
    events.push(`${kind} ${p.sku} qty=${randInt(1, 40)} at=2026-12-${String(randInt(1, 30)).padStart(2, '0')}T${String(randInt(0, 23)).padStart(2, '0')}:${String(randInt(0, 59)).padStart(2, '0')}`);
  }
  return events;
}

// ------------------------------------------------------------ json
function jsonRoundTrip(products, rounds) {
  let total = 0;
  for (let r = 0; r < rounds; r++) {
    const blob = JSON.stringify(products);
    const back = JSON.parse(blob);
    total += back.length + (blob.length % 7);
  }
  return total;
}

// ------------------------------------------------------------ regex
const SKU_RE = /^([A-Z]{3})-(\d{6})$/;
const WEIGHT_RE = /^(\d+\.\d+)kg$/;
const DIMS_RE = /^(\d+)x(\d+)x(\d+)cm$/;
const EMAIL_RE = /^[a-z0-9.-]+@[a-z0-9-]+(\.[a-z]+)+$/;
const EVENT_RE = /^(receive|ship|adjust|return) ([A-Z]{3}-\d{6}) qty=(\d+) at=(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

function validate(products) {
  let ok = 0;
  for (const p of products) {
    const s = SKU_RE.exec(p.sku);
    const w = WEIGHT_RE.exec(p.weight);
    const d = DIMS_RE.exec(p.dims);
    if (s && w && d && EMAIL_RE.test(p.supplier)) {
      p.volume = Number(d[1]) * Number(d[2]) * Number(d[3]);
      p.kg = Number(w[1]);
      ok++;
    }
  }
  return ok;
}

// ------------------------------------------------------------ inventory
function applyEvents(products, events) {
  const stock = new Map(products.map((p) => [p.sku, 100]));
  const perDay = new Map();
  let bad = 0;
  for (const line of events) {
    const m = EVENT_RE.exec(line);
    if (!m) { bad++; continue; }
    const qty = Number(m[3]);
    const delta = m[1] === 'receive' || m[1] === 'return' ? qty : m[1] === 'ship' ? -qty : qty % 3 - 1;
    stock.set(m[2], (stock.get(m[2]) || 0) + delta);
    const day = `${m[4]}-${m[5]}-${m[6]}`;
    perDay.set(day, (perDay.get(day) || 0) + 1);
  }
  return { stock, perDay, bad };
}

// ------------------------------------------------------------ sorting
function sortViews(products, stock) {
  const byPrice = products.slice().sort((a, b) => b.price - a.price || (a.sku < b.sku ? -1 : 1));
  const byName = products.slice().sort((a, b) => a.name.localeCompare(b.name));
  const byStock = products.slice().sort((a, b) => stock.get(a.sku) - stock.get(b.sku));
  const byCat = products.slice().sort((a, b) =>
    a.category === b.category ? a.volume - b.volume : a.category < b.category ? -1 : 1);
  return [byPrice[0].sku, byName[0].sku, byStock[0].sku, byCat[0].sku];
}

function mergeSort(arr) {
  if (arr.length <= 1) return arr;
  const mid = arr.length >> 1;
  const left = mergeSort(arr.slice(0, mid));
  const right = mergeSort(arr.slice(mid));
  const out = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) out.push(left[i] <= right[j] ? left[i++] : right[j++]);
  while (i < left.length) out.push(left[i++]);
  while (j < right.length) out.push(right[j++]);
  return out;
}

// ------------------------------------------------------------ recursion
function buildBundles(products, depth) {
  // Random tree of bundles whose leaves are products.
  if (depth === 0) return { product: pick(products) };
  const n = randInt(2, 4);
  return { children: Array.from({ length: n }, () => buildBundles(products, depth - 1)), discount: rand() * 0.1 };
}

function bundlePrice(node) {
  if (node.product) return node.product.price;
  let sum = 0;
  for (const c of node.children) sum += bundlePrice(c);
  return sum * (1 - node.discount);
}

function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

// ------------------------------------------------------------ report
function report(products, inv, views) {
  const lines = [];
  const byCat = new Map();
  for (const p of products) {
    const e = byCat.get(p.category) || { n: 0, value: 0 };
    e.n++;
    e.value += p.price * Math.max(0, inv.stock.get(p.sku));
    byCat.set(p.category, e);
  }
  for (const [cat, e] of [...byCat].sort()) {
    lines.push(`${cat.padEnd(10)} ${String(e.n).padStart(6)} ${e.value.toFixed(2).padStart(14)}`);
  }
  lines.push(`firsts: ${views.join(', ')}`);
  return lines;
}

function main() {
  const t0 = Date.now();
  const products = Array.from({ length: N }, (_, i) => makeProduct(i));
  const events = makeEvents(products, N * 8);
  const nJson = jsonRoundTrip(products, 6);
  const valid = validate(products);
  const inv = applyEvents(products, events);
  const views = sortViews(products, inv.stock);
  const sorted = mergeSort(events.map((e, i) => products[i % products.length].price + e.length));
  let bundles = 0;
  for (let i = 0; i < 30; i++) bundles += bundlePrice(buildBundles(products, 7));
  const f = fib(32);
  const lines = report(products, inv, views);
  console.log(
    `products=${products.length} events=${events.length} json=${nJson} valid=${valid} bad=${inv.bad} ` +
    `days=${inv.perDay.size} median=${sorted[sorted.length >> 1]} bundles=${bundles.toFixed(2)} ` +
    `fib=${f} report_lines=${lines.length} elapsed_ms=${Date.now() - t0}`);
}

main();

//! Conformance of the JSON readers (speedscope, `.cpuprofile`, Chrome trace events,
//! Gecko) against speedscope's importers, through the oracles in the shared corpus.
//!
//! Reads `$EMBER_CORPUS` (the `shared/corpus` folder; see its MANIFEST.md). Unset:
//! the suite prints that it was skipped and passes. Set to a folder that does not
//! exist: the suite fails.
//!
//! Every input under `speedscope-json/`, `cpuprofile/`, `chrome-trace/`,
//! `trace-event/` and `firefox-gecko/` is loaded through `formats::load` (detection
//! included: the detected format must be the folder's). Then, for each of
//! speedscope's profiles in `<file>.speedscope-summary.json`, ember's samples of the
//! matching thread (speedscope profile `i` is ember thread `i`; for Gecko, the
//! `GeckoMain` thread speedscope picks) are compared:
//!
//! * the total with `totalNonIdleWeight` (the weight of speedscope's call tree);
//! * the stacks with that profile's section of `<file>.speedscope-folded.txt[.gz]`,
//!   as a multiset (equal stacks merged);
//! * every function of ember's `TopTable` (self, total counted once per stack) with
//!   the same figures computed from speedscope's folded stacks, and every entry of
//!   `topBySelf` / `topByTotal` with both (see the frame-identity row below);
//! * the value columns of `topBySelf` / `topByTotal` in order with ember's table
//!   sorted the same way, when no two of speedscope's frames share a name.
//!
//! Values compare with a relative tolerance of 1e-6 (plus 1e-4 absolute): Gecko
//! times are fractional milliseconds that ember stores to the nanosecond.
//! Inputs with `<file>.speedscope-error.txt` (speedscope threw) must load or fail
//! with an error naming the file; inputs with no oracle must load. Nothing may panic.
//!
//! Also here: the four JSON probes are sure of every input of their own folders
//! and of nothing else, and none claims folded, perf script or pprof inputs; every
//! JSON input, cut short or with bytes flipped, loads or fails without a panic;
//! and the hand-written inputs in `tests/fixtures/json/` (no corpus needed) give
//! the stacks, threads and times worked out by hand.
//!
//! Intended deviations from speedscope (each still checked, as the last column says):
//!
//! | where | speedscope | ember | how it is checked |
//! |---|---|---|---|
//! | all | `totalWeight` of a `.cpuprofile` / DevTools trace is `endTime - startTime`, of a Gecko profile its `duration`: it includes unsampled time | the total is the sum of the sample weights | totals compared with `totalNonIdleWeight`, the weight of speedscope's call tree |
//! | all | frames are keyed by name, file, line and column | frames are keyed by name (file and line are frame metadata), so same-named functions share a row | ember's table is compared with speedscope's folded stacks merged by name; a summary entry must equal that merged figure unless its name belongs to several of speedscope's frames; the in-order value check is skipped for such files |
//! | all | several profiles per file | one ember profile, a thread per speedscope profile (thread column) | compared per thread |
//! | `cpuprofile`, `chrome-trace` (CPU profiles) | drops `(idle)` samples | keeps them as a root frame `(idle)` | `(idle)` stacks removed from ember's side |
//! | `cpuprofile`, `chrome-trace` (CPU profiles) | drops samples whose node is `(root)` or `native dummy.js` | keeps their weight as a sample without frames | stackless samples removed from ember's side |
//! | `trace-event`, `chrome-trace` (duration events) | names a frame `name {args as JSON}` | names it `name` | the ` {...}` args are removed from speedscope's names |
//! | `firefox-gecko` | imports the `GeckoMain` thread only, and of its frames only JavaScript ones (`name (file:line:col)`) outside `resource:` and `self-hosted` | every thread and every frame (native, labels, browser JavaScript) | the GeckoMain thread is compared after removing, on ember's side, frames without a source file or with a `resource:`/`self-hosted` one, and samples left without frames; the top table is computed from that |
//! | `chrome-trace/firefox-profiler/chrome-trace-issue-5429.json.gz` | not taken for a DevTools trace (its first event has no `cat`), read as duration events, of which it has none: an empty profile | reads its `Profile`/`ProfileChunk` events | must load with samples from its one CPU profile |
//! | `trace-event/speedscope/mismatched-name.json` | an empty profile (its only end event matches nothing) | no sample: a clean load error | must fail with an error naming the file |
//! | all | lists frames that were entered for no time (self 0, total 0) in `topBySelf` / `topByTotal` | has no row for a function without weight | such entries are left out of the in-order check |
//! | `speedscope-json/speedscope/invalid/*` | throws (a frame left open; a close out of order) | loads with warnings (open frames closed at `endValue`; an out-of-order close closes the frames above it) | must load, with warnings |
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use ember::error::LoadError;
use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, FrameId, Profile, Samples, SortKey, TopTable, TreeOptions};
use ember::sources::input::{Progress, Source};

/// The corpus folders this suite reads, with ember's format for them.
const FOLDERS: &[(&str, &str)] = &[
    ("speedscope-json", "speedscope"),
    ("cpuprofile", "cpuprofile"),
    ("chrome-trace", "chrome-trace"),
    ("trace-event", "chrome-trace"),
    ("firefox-gecko", "gecko"),
];

/// Stacks and values: `a;b;c` -> weight.
type Folded = BTreeMap<String, f64>;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()) + 1e-4
}

fn load(path: &Path) -> Result<Profile, LoadError> {
    formats::load(
        &Source::Path(path.to_path_buf()),
        &LoadOptions::default(),
        &Progress::new(),
    )
}

/// Text of a file, gunzipped when its name ends in `.gz`.
fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|x| x == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        s
    } else {
        String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

fn with_suffix(input: &Path, suffix: &str) -> PathBuf {
    let mut s = input.as_os_str().to_owned();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// speedscope's folded oracle, one map per `# profile i: name` section.
fn oracle_sections(text: &str) -> Vec<Folded> {
    let mut out: Vec<Folded> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if line.starts_with("# profile ") {
            out.push(Folded::new());
            continue;
        }
        if out.is_empty() {
            out.push(Folded::new());
        }
        let (stack, v) = line.rsplit_once(' ').expect("`stack value` line");
        let v: f64 = v
            .parse()
            .unwrap_or_else(|_| panic!("bad oracle value in {line:?}"));
        *out.last_mut()
            .expect("a section")
            .entry(stack.to_string())
            .or_default() += v;
    }
    out
}

/// Removes speedscope's ` {args JSON}` suffixes from the frame names of a stack.
fn strip_args(stack: &str) -> String {
    let b = stack.as_bytes();
    let mut out = String::with_capacity(stack.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' '
            && b.get(i + 1) == Some(&b'{')
            && let Some(end) = json_object_end(&b[i + 1..])
            && (i + 1 + end == b.len() || b[i + 1 + end] == b';')
        {
            i += 1 + end;
            continue;
        }
        let ch = stack[i..].chars().next().expect("a char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Length of the balanced JSON object at the start of `b`.
fn json_object_end(b: &[u8]) -> Option<usize> {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The samples of thread `t` only.
fn thread_profile(p: &Profile, t: u32) -> Profile {
    let n = p.value_types.len();
    let threads = p.samples.thread.as_ref().expect("a thread column");
    let mut samples = Samples::default();
    for i in (0..p.samples.len()).filter(|&i| threads[i] == t) {
        samples.stack.push(p.samples.stack[i]);
        samples
            .values
            .extend_from_slice(&p.samples.values[i * n..(i + 1) * n]);
    }
    Profile {
        samples,
        ..p.clone()
    }
}

/// How ember's side is normalised before comparing (see the table above).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Drop `(idle)` stacks and stackless samples.
    Cpu,
    /// Keep only frames with a JavaScript file, as speedscope's Firefox importer.
    GeckoJs,
    Plain,
}

fn is_speedscope_js(p: &Profile, f: FrameId) -> bool {
    p.frame_meta
        .get(&f)
        .and_then(|m| m.file.as_deref())
        .is_some_and(|file| {
            !file.is_empty()
                && !file.starts_with("resource:")
                && file != "self-hosted"
                && !file.starts_with("self-hosted:")
        })
}

/// Ember's stacks of `p` for value `v`, normalised for `side`.
fn ember_folded(p: &Profile, v: usize, side: Side) -> Folded {
    let n = p.value_types.len();
    let scale = p.value_types[v].scale();
    let mut out = Folded::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    for i in 0..p.samples.len() {
        let value = p.samples.values[i * n + v] as f64 / scale;
        let Some(s) = p.samples.stack_of(i) else {
            if side == Side::Plain {
                *out.entry("<no frames>".into()).or_default() += value;
            }
            continue;
        };
        let stack = names
            .entry(s.0)
            .or_insert_with(|| {
                p.stacks
                    .path(s)
                    .into_iter()
                    .filter(|&f| side != Side::GeckoJs || is_speedscope_js(p, f))
                    .map(|f| p.frames.name(f).into_owned())
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .clone();
        if stack.is_empty() || (side == Side::Cpu && stack == "(idle)") {
            continue;
        }
        *out.entry(stack).or_default() += value;
    }
    out.retain(|_, v| *v != 0.0);
    out
}

/// Self and total per name from folded stacks (total once per stack).
fn top_from_folded(f: &Folded) -> HashMap<String, (f64, f64)> {
    let mut out: HashMap<String, (f64, f64)> = HashMap::new();
    for (stack, v) in f {
        let frames: Vec<&str> = stack.split(';').collect();
        for name in frames.iter().copied().collect::<HashSet<_>>() {
            out.entry(name.to_string()).or_default().1 += v;
        }
        if let Some(leaf) = frames.last() {
            out.entry((*leaf).to_string()).or_default().0 += v;
        }
    }
    out
}

/// Ember's `TopTable` for value `v`, by name, and its rows sorted by `key`.
fn ember_top(p: &Profile, v: usize) -> (HashMap<String, (f64, f64)>, CallTree) {
    let tree = CallTree::build(
        p,
        TreeOptions {
            value: v,
            ..TreeOptions::default()
        },
    );
    let scale = p.value_types[v].scale();
    let rows = TopTable::build(p, &tree)
        .rows
        .iter()
        .map(|r| {
            (
                p.frames.name(r.frame).into_owned(),
                (r.self_weight as f64 / scale, r.total as f64 / scale),
            )
        })
        .collect();
    (rows, tree)
}

fn diff_folded(what: &str, expected: &Folded, got: &Folded, problems: &mut Vec<String>) {
    let mut lines = Vec::new();
    for (k, v) in expected {
        match got.get(k) {
            Some(g) if close(*v, *g) => {}
            g => lines.push(format!("  {k}: speedscope {v}, ember {g:?}")),
        }
    }
    for (k, v) in got {
        if !expected.contains_key(k) {
            lines.push(format!("  {k}: speedscope none, ember {v}"));
        }
    }
    if !lines.is_empty() {
        problems.push(format!("{what}: {} lines differ", lines.len()));
        problems.extend(lines.into_iter().take(10));
    }
}

/// Which ember thread speedscope's profile `i` is.
fn ember_thread(p: &Profile, folder: &str, i: usize) -> Option<u32> {
    if folder == "firefox-gecko" {
        // speedscope: the only thread, else the first GeckoMain.
        if p.threads.len() == 1 {
            return Some(0);
        }
        return p
            .threads
            .iter()
            .position(|t| t.name.ends_with("GeckoMain"))
            .map(|t| t as u32);
    }
    (i < p.threads.len()).then_some(i as u32)
}

/// Compares one of speedscope's profiles with ember's thread.
fn check_profile(
    p: &Profile,
    folder: &str,
    i: usize,
    summary: &serde_json::Value,
    oracle: &Folded,
    problems: &mut Vec<String>,
    used: &mut HashSet<&'static str>,
) {
    let Some(t) = ember_thread(p, folder, i) else {
        problems.push(format!(
            "profile {i}: ember has no matching thread ({} threads)",
            p.threads.len()
        ));
        return;
    };
    let tp = thread_profile(p, t);
    // The value speedscope weighs by: the one in its unit (speedscope files may
    // have several), else the default.
    let unit = summary["weightUnit"].as_str().unwrap_or("none");
    let v = tp
        .value_types
        .iter()
        .position(|vt| {
            vt.unit == ember::model::Unit::from_name(unit) && vt.unit.name() != "samples"
        })
        .unwrap_or(tp.default_value);
    let side = match folder {
        "cpuprofile" | "chrome-trace" => Side::Cpu,
        "firefox-gecko" => Side::GeckoJs,
        _ => Side::Plain,
    };
    let ours = ember_folded(&tp, v, side);
    if side == Side::GeckoJs {
        used.insert("gecko: GeckoMain's JavaScript frames only");
    } else if ours != ember_folded(&tp, v, Side::Plain) {
        used.insert("(idle) and stackless samples dropped");
    }
    if summary["totalWeight"].as_f64() != summary["totalNonIdleWeight"].as_f64() {
        used.insert("total is totalNonIdleWeight");
    }
    let theirs: Folded = if folder == "trace-event" || folder == "chrome-trace" {
        let mut m = Folded::new();
        for (k, val) in oracle {
            *m.entry(strip_args(k)).or_default() += val;
        }
        m
    } else {
        oracle.clone()
    };
    if theirs.len() != oracle.len() || theirs.keys().zip(oracle.keys()).any(|(a, b)| a != b) {
        used.insert("args stripped from names");
    }
    let total: f64 = ours.values().sum();
    let want = summary["totalNonIdleWeight"]
        .as_f64()
        .expect("totalNonIdleWeight");
    if !close(total, want) {
        problems.push(format!(
            "profile {i}: total: speedscope {want}, ember {total}"
        ));
    }
    diff_folded(&format!("profile {i}: folded"), &theirs, &ours, problems);

    let merged = top_from_folded(&theirs);
    let (table, _tree) = ember_top(&tp, v);
    let ember_rows = if side == Side::GeckoJs {
        top_from_folded(&ours)
    } else {
        table
    };
    for (name, want) in &merged {
        match ember_rows.get(name) {
            Some(got) if close(got.0, want.0) && close(got.1, want.1) => {}
            got => problems.push(format!(
                "profile {i}: top {name:?}: speedscope {want:?}, ember {got:?}"
            )),
        }
    }
    let allowed_extra = |n: &str| side == Side::Cpu && n == "(idle)";
    for (name, got) in &ember_rows {
        if !merged.contains_key(name) && !allowed_extra(name) && (got.0 != 0.0 || got.1 != 0.0) {
            problems.push(format!(
                "profile {i}: top {name:?}: only ember has it ({got:?})"
            ));
        }
    }
    // The summary's per-frame entries: equal to the merged figure unless the name
    // belongs to several of speedscope's frames.
    // A name listed twice in one list belongs to several of speedscope's frames.
    let mut keys_of: HashMap<&str, usize> = HashMap::new();
    for list in ["topBySelf", "topByTotal"] {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for e in summary[list].as_array().expect("top list") {
            *seen.entry(e["name"].as_str().expect("name")).or_default() += 1;
        }
        for (name, n) in seen {
            let k = keys_of.entry(name).or_default();
            *k = (*k).max(n);
        }
    }
    let mut shared_names = keys_of.values().any(|&n| n > 1);
    for list in ["topBySelf", "topByTotal"] {
        for e in summary[list].as_array().expect("top list") {
            let name = strip_args(e["name"].as_str().expect("name"));
            let entry = (
                e["self"].as_f64().unwrap_or(0.0),
                e["total"].as_f64().unwrap_or(0.0),
            );
            let m = merged.get(&name).copied().unwrap_or_default();
            let direct = close(m.0, entry.0) && close(m.1, entry.1);
            if !direct {
                shared_names = true;
                let several = keys_of
                    .get(e["name"].as_str().unwrap_or(""))
                    .is_some_and(|&k| k > 1)
                    || m.0 >= entry.0 && m.1 >= entry.1;
                if !several {
                    problems.push(format!(
                        "profile {i}: {list} {name:?}: {entry:?} but folded says {m:?}"
                    ));
                }
            }
        }
    }
    if shared_names {
        used.insert("names shared by several frames");
    }
    if !shared_names && side != Side::GeckoJs {
        for (list, key) in [
            ("topBySelf", SortKey::SelfWeight),
            ("topByTotal", SortKey::Total),
        ] {
            let entries = summary[list].as_array().expect("top list");
            let col = |s: f64, t: f64| if key == SortKey::Total { t } else { s };
            let tree = CallTree::build(
                &tp,
                TreeOptions {
                    value: v,
                    ..TreeOptions::default()
                },
            );
            let mut table = TopTable::build(&tp, &tree);
            table.sort(&tp, key, true);
            let scale = tp.value_types[v].scale();
            // speedscope lists frames that were entered for no time; ember has no
            // row for a function without weight.
            let theirs: Vec<f64> = entries
                .iter()
                .map(|e| {
                    (
                        e["self"].as_f64().unwrap_or(0.0),
                        e["total"].as_f64().unwrap_or(0.0),
                    )
                })
                .filter(|&(s, t)| s != 0.0 || t != 0.0)
                .map(|(s, t)| col(s, t))
                .collect();
            let ours: Vec<f64> = table
                .rows
                .iter()
                .filter(|r| !allowed_extra(&tp.frames.name(r.frame)))
                .take(theirs.len())
                .map(|r| col(r.self_weight as f64 / scale, r.total as f64 / scale))
                .collect();
            if ours.len() != theirs.len() || ours.iter().zip(&theirs).any(|(a, b)| !close(*a, *b)) {
                problems.push(format!(
                    "profile {i}: {list} in order: speedscope {theirs:?}, ember {ours:?}"
                ));
            }
        }
    }
}

enum Verdict {
    Pass,
    /// Passed through a documented deviation (see the table above).
    PassDeviation(Vec<&'static str>),
    Fail(Vec<String>),
}

fn check_file(corpus: &Path, folder: &str, format: &str, input: &Path) -> Verdict {
    let rel = input
        .strip_prefix(corpus)
        .unwrap_or(input)
        .to_string_lossy()
        .replace('\\', "/");
    let summary_path = with_suffix(input, "speedscope-summary.json");
    let error_oracle = with_suffix(input, "speedscope-error.txt").exists();
    let loaded = load(input);
    let mut problems = Vec::new();
    if let Ok(p) = &loaded
        && !p.format.starts_with(format)
    {
        problems.push(format!("detected as {}, expected {format}", p.format));
    }
    let file_name = input.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    if error_oracle || !summary_path.exists() {
        // speedscope threw (or there is no oracle): ember loads it or fails cleanly.
        return match loaded {
            Ok(p) if error_oracle && p.warnings.is_empty() => Verdict::Fail(vec![
                "loads without a warning what speedscope rejects".into(),
            ]),
            Ok(_) if problems.is_empty() && error_oracle => {
                Verdict::PassDeviation(vec!["loads what speedscope rejects"])
            }
            Ok(_) if problems.is_empty() => Verdict::Pass,
            Ok(_) => Verdict::Fail(problems),
            Err(e) if error_oracle && e.to_string().contains(file_name) => {
                Verdict::PassDeviation(vec!["clean error"])
            }
            Err(e) => Verdict::Fail(vec![format!("ember failed: {e}")]),
        };
    }
    let summary: serde_json::Value =
        serde_json::from_str(&read_text(&summary_path)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let profiles = summary["profiles"].as_array().expect("profiles");
    let oracle_total: f64 = profiles
        .iter()
        .map(|sp| sp["totalNonIdleWeight"].as_f64().unwrap_or(0.0))
        .sum();
    let p = match loaded {
        Ok(p) => p,
        // speedscope made an empty profile; ember has no sample to show.
        Err(e) if oracle_total == 0.0 && e.to_string().contains(file_name) => {
            return Verdict::PassDeviation(vec!["no samples: clean error"]);
        }
        Err(e) => return Verdict::Fail(vec![format!("ember failed to load it: {e}")]),
    };
    if oracle_total == 0.0 {
        // speedscope saw nothing (chrome-trace-issue-5429): ember must see something.
        return if p.samples.is_empty() || p.total(p.default_value) == 0 {
            Verdict::Fail(vec!["no weight".into()])
        } else if problems.is_empty() {
            Verdict::PassDeviation(vec!["speedscope saw no CPU profile"])
        } else {
            Verdict::Fail(problems)
        };
    }
    let folded_path = ["speedscope-folded.txt", "speedscope-folded.txt.gz"]
        .iter()
        .map(|s| with_suffix(input, s))
        .find(|p| p.exists());
    let Some(folded_path) = folded_path else {
        return Verdict::Fail(vec!["no speedscope-folded oracle".into()]);
    };
    let mut sections = oracle_sections(&read_text(&folded_path));
    sections.resize(profiles.len(), Folded::new());
    let mut used = HashSet::new();
    for (i, sp) in profiles.iter().enumerate() {
        check_profile(&p, folder, i, sp, &sections[i], &mut problems, &mut used);
    }
    if profiles.len() > 1 {
        used.insert("profiles compared per thread");
    }
    let mut used: Vec<&str> = used.into_iter().collect();
    used.sort();
    match (problems.is_empty(), used.is_empty()) {
        (true, true) => Verdict::Pass,
        (true, false) => Verdict::PassDeviation(used),
        (false, _) => Verdict::Fail(problems),
    }
}

/// Profile inputs under `dir`, recursively: every file but the oracles.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                todo.push(path);
            } else if !name.contains(".speedscope-") && !name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

use common::say;

#[test]
fn json_formats_match_speedscope() {
    let Some(corpus) = common::corpus("JSON conformance suite") else {
        return;
    };
    let mut failures = Vec::new();
    let mut counts: Vec<(&str, usize, usize, usize, String)> = Vec::new();
    for &(folder, format) in FOLDERS {
        let dir = corpus.join(folder);
        assert!(dir.is_dir(), "{} is missing", dir.display());
        let files = inputs(&dir);
        assert!(!files.is_empty(), "no inputs under {}", dir.display());
        let (mut pass, mut via_deviation) = (0, 0);
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for file in &files {
            let verdict = std::panic::catch_unwind(|| check_file(&corpus, folder, format, file))
                .unwrap_or_else(|_| Verdict::Fail(vec!["panicked".into()]));
            let rel = file
                .strip_prefix(&corpus)
                .unwrap_or(file)
                .display()
                .to_string();
            match verdict {
                Verdict::Pass => pass += 1,
                Verdict::PassDeviation(used) => {
                    pass += 1;
                    via_deviation += 1;
                    for r in used {
                        *reasons.entry(r).or_default() += 1;
                    }
                }
                Verdict::Fail(problems) => {
                    say(&format!("FAIL {rel}"));
                    for p in problems.iter().take(16) {
                        say(&format!("    {p}"));
                    }
                    failures.push(rel);
                }
            }
        }
        let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        counts.push((folder, pass, files.len(), via_deviation, reasons.join("; ")));
    }
    for (folder, pass, total, dev, reasons) in &counts {
        let name = match *folder {
            "speedscope-json" => "speedscope",
            "firefox-gecko" => "gecko",
            f => f,
        };
        say(&format!(
            "{name}: {pass}/{total} ({dev} through documented deviations: {reasons})"
        ));
    }
    assert!(
        failures.is_empty(),
        "JSON conformance failures: {failures:?}"
    );
}

#[test]
fn strips_speedscope_args_from_names() {
    assert_eq!(strip_args(r#"A {"x":1};B {"y":"a;b}"}"#), "A;B");
    assert_eq!(strip_args("a {b;c"), "a {b;c");
    assert_eq!(strip_args("plain;names"), "plain;names");
}

/// The first 64 KiB of `path`, gunzipped when it starts with gzip's magic.
fn head_of(path: &Path) -> (Vec<u8>, bool) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut all = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(64 * 1024 + 1)
            .read_to_end(&mut all);
    } else {
        all = bytes;
    }
    let complete = all.len() <= 64 * 1024;
    all.truncate(64 * 1024);
    if all.starts_with(b"\xef\xbb\xbf") {
        all.drain(..3);
    }
    (all, complete)
}

#[test]
fn json_probes_are_sure_of_their_own_and_only_their_own() {
    let Some(corpus) = common::corpus("JSON probe suite") else {
        return;
    };
    use ember::formats::{chrome, gecko, speedscope};
    let mut problems = Vec::new();
    let mut claimed_elsewhere = Vec::new();
    for e in std::fs::read_dir(&corpus).expect("corpus") {
        let dir = e.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        let folder = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let own = FOLDERS.iter().find(|f| f.0 == folder).map(|f| f.1);
        for file in inputs(&dir) {
            let (head, complete) = head_of(&file);
            if head.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let says = [
                ("speedscope", speedscope::probe(&head, complete)),
                ("cpuprofile", chrome::probe_cpuprofile(&head, complete)),
                ("chrome-trace", chrome::probe_trace(&head, complete)),
                ("gecko", gecko::probe(&head, complete)),
            ];
            let sure: Vec<&str> = says
                .iter()
                .filter(|s| s.1 == Some(true))
                .map(|s| s.0)
                .collect();
            let rel = file
                .strip_prefix(&corpus)
                .unwrap_or(&file)
                .display()
                .to_string();
            if sure.len() > 1 {
                problems.push(format!("{rel}: several probes are sure: {sure:?}"));
            }
            match own {
                Some(format) if sure != [format] => problems.push(format!(
                    "{rel}: expected only {format} to be sure, got {says:?}"
                )),
                None if ["folded", "perf-script", "pprof", "pprof-legacy"]
                    .contains(&folder.as_str())
                    && says.iter().any(|s| s.1 != Some(false)) =>
                {
                    problems.push(format!(
                        "{rel}: a JSON probe is not sure it is not JSON: {says:?}"
                    ))
                }
                None if !sure.is_empty() => claimed_elsewhere.push(format!("{rel}: {sure:?}")),
                _ => {}
            }
        }
    }
    for c in &claimed_elsewhere {
        say(&format!("claimed outside the JSON folders: {c}"));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every JSON corpus input, cut short at many points and with bytes flipped, must
/// give a profile or an error: never a panic.
#[test]
fn damaged_json_inputs_never_panic() {
    let Some(corpus) = common::corpus("JSON damage suite") else {
        return;
    };
    use ember::formats::{chrome, gecko, speedscope};
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut runs = 0;
    for &(folder, format) in FOLDERS {
        for file in inputs(&corpus.join(folder)) {
            let (head, _) = head_of(&file);
            let mut bytes = std::fs::read(&file).expect("read");
            if bytes.starts_with(&[0x1f, 0x8b]) {
                bytes = head; // gzipped inputs: their first 64 KiB, decompressed
            }
            if bytes.len() > 100_000 {
                bytes.truncate(100_000);
            }
            let parse = |b: &[u8]| {
                let progress = Progress::default();
                let r = match format {
                    "speedscope" => speedscope::parse(b, &progress),
                    "cpuprofile" => chrome::parse_cpuprofile(b, &progress),
                    "chrome-trace" => chrome::parse_trace(b, &progress),
                    _ => gecko::parse(b, &progress),
                };
                r.map(|p| p.samples.len()).ok()
            };
            let mut cases: Vec<Vec<u8>> = (1..16)
                .map(|k| bytes[..bytes.len() * k / 16].to_vec())
                .collect();
            for _ in 0..16 {
                let mut b = bytes.clone();
                for _ in 0..3 {
                    let i = (rand() as usize) % b.len().max(1);
                    let noise = b"0123456789-.,:[]{}\"ae \\";
                    if let Some(x) = b.get_mut(i) {
                        *x = noise[(rand() % noise.len() as u64) as usize];
                    }
                }
                cases.push(b);
            }
            for case in cases {
                runs += 1;
                let ok = std::panic::catch_unwind(|| parse(&case));
                assert!(ok.is_ok(), "{} panicked on a damaged copy", file.display());
            }
        }
    }
    say(&format!("damaged JSON inputs: {runs} parses, no panic"));
}

/// Stacks as `a;b value` lines, values in the value type's unit, sorted.
fn folded_lines(p: &Profile) -> Vec<String> {
    let v = p.default_value;
    ember_folded(p, v, Side::Plain)
        .into_iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect()
}

/// The hand-written fixtures load through detection, with the stacks, threads
/// and times worked out by hand (no corpus needed).
#[test]
fn fixtures_load_through_detection() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json");
    let get = |name: &str| load(&dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));

    let p = get("simple.speedscope.json");
    assert_eq!(p.format, "speedscope");
    assert_eq!(
        folded_lines(&p),
        ["main 3.5", "main;parse 5", "main;render 7.5"]
    );
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.value_types[0].unit, ember::model::Unit::Milliseconds);
    assert!(p.samples.time.is_none(), "a sampled profile has no times");

    let p = get("simple.cpuprofile");
    assert_eq!(p.format, "cpuprofile");
    assert_eq!(
        folded_lines(&p),
        [
            "(anonymous app.js:1);handle 200",
            "(anonymous app.js:1);handle;hash 500",
            "(anonymous app.js:1);handle;hash;(garbage collector) 500",
            "(idle) 400",
        ]
    );
    assert_eq!(p.meta.duration_ns, Some(2_000_000));
    assert_eq!(p.samples.time.as_ref().map(|t| t[0]), Some(1_000_100_000));
    let hash = p.frames.get(b"hash").expect("hash");
    assert_eq!(p.frame_meta[&hash].line, Some(20));
    assert_eq!(
        p.frame_meta[&hash].file.as_deref(),
        Some("file:///srv/app.js")
    );

    let p = get("devtools-trace.json");
    assert_eq!(p.format, "chrome-trace");
    assert_eq!(folded_lines(&p), ["onClick 500", "onClick;layout 500"]);
    assert_eq!(p.threads[0].name, "CrRendererMain");
    assert_eq!((p.threads[0].pid, p.threads[0].tid), (Some(10), Some(11)));
    assert_eq!(p.samples.time.as_ref().map(|t| t[0]), Some(5_010_000));

    let p = get("duration-events.json");
    assert_eq!(p.format, "chrome-trace");
    assert_eq!(
        folded_lines(&p),
        ["build 25", "build;compile 60", "build;link 15", "io 40"]
    );
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.threads[0].name, "worker");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);

    let p = get("gecko-raw.json");
    assert_eq!(p.format, "gecko");
    assert_eq!(
        folded_lines(&p),
        [
            "(root);main 0.5",
            "(root);main;draw 2.5",
            "(root);main;nsRefreshDriver::Tick 1"
        ]
    );
    let main = p.frames.get(b"main").expect("main");
    assert_eq!(p.frame_meta[&main].line, Some(12));
    let start = p.meta.start_unix_ns.expect("start") as f64;
    assert!((start - 1.7000000000005e18).abs() < 1e4, "{start}");
    assert_eq!(p.total(1), 5, "the second value counts samples");
}

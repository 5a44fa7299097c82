//! Conformance against peer tools' outputs in the shared corpus.
//!
//! Reads `$EMBER_CORPUS` (the `shared/corpus` folder next to the repository; see its
//! MANIFEST.md). Unset: the suite prints that it was skipped and passes. Set to a
//! folder that does not exist: the suite fails.
//!
//! For every input under `$EMBER_CORPUS/folded/` with a speedscope oracle:
//!
//! * `<file>.speedscope-summary.json`: ember's root total must equal
//!   `profiles[0].totalWeight`; every entry of `topBySelf` / `topByTotal` (top 40,
//!   recursion-safe totals like ours) must have ember's self and total for that
//!   name, and the value columns must equal ember's `TopTable` sorted the same way
//!   (names within a tie may come in either order).
//! * `<file>.speedscope-folded.txt` (or `.txt.gz`): speedscope's merged call tree
//!   as `stack self` lines must equal ember's normalised folded output as a
//!   multiset.
//! * `<file>.speedscope-error.txt` (speedscope rejected the file): ember must load
//!   it or fail cleanly; `empty.txt` must give `LoadError::Empty`, and a file
//!   ember loads is checked against the reference reader below.
//!
//! Every file is also checked against a small reference reader written here
//! (split each line at its last space, sum exact decimal counts per stack, skip
//! blank, `#` and unparsable lines), and its warnings against the expected bad
//! lines.
//!
//! Intended deviations from speedscope (each is still checked, differently):
//!
//! | file | speedscope | ember | how it is checked |
//! |---|---|---|---|
//! | `speedscope/simple-with-invalids.txt` | ignores `// some other comment` and `invalid line` silently | skips them too, and counts each as a warning with its line number (2, 8) | oracle as usual; ember's warnings asserted |
//! | `inferno/bad-lines/bad-lines.txt` | ignores the two malformed lines silently | skips them, warnings at lines 3 and 6 | oracle as usual; warnings asserted |
//! | `inferno/differential/perf-cycles-instructions-01-collapsed-all-diff.txt` | no differential support: reads `stack c1 c2` as a one-count line whose leaf frame is named `leaf c1`, weighted `c2` | differential folded: two value types (before = c1, after = c2), shows c2 by default, leaf frame named `leaf` | the ` c1` suffix is stripped from speedscope's leaf names; total (both use c2), folded and the full top table compared with that |
//! | `inferno/austin/flames.txt` | reads the austin header lines `# duration: 23873` and `# interval: 100` as stacks (frames `# duration:` and `# interval:`), so its total is 24264 | `#` lines are comments (as in inferno), total 291 | the `#` stacks are removed from speedscope's folded output; total, folded and the full top table compared with that |
//! | `speedscope/perf-vertx-stacks-01-collapsed-all.txt`, `inferno/unsorted-input/perf-vertx-stacks-01-collapsed-all-unsorted.txt`, `inferno/multiple-inputs/perf-vertx-stacks-01-collapsed-all-unsorted-1.txt` | the line `...;write0_[j];  3` (a `;` and two blanks before the count) gets a leaf frame named `" "` | blanks before the count are trimmed and the empty last frame is dropped, so the 3 samples are self time of `write0_[j]` | whitespace-only frames are removed from speedscope's stacks; total, folded and the full top table compared with that |
//! | `inferno-diff/bad_before.txt` | ignores line 3 (a stack without a count) silently | skips it with a warning at line 3 | oracle as usual; warning asserted |
//! | `inferno/fractional-samples/zero-fractionals.txt` | silently drops lines whose count is not `\d+` (`31.0`, `6.`, `2.0`) | reads them as 31, 6 and 2 (inferno does too) | compared with the oracles of `no-fractionals.txt` (the same stacks with integer counts); speedscope's own lines must be a subset of ember's |
//! | `inferno-diff/before_fractionals.txt` | drops the 7 lines with fractional counts, keeps only `dd;[unknown];[dd] 3` | reads every line (up to 6 decimals kept) | reference reader; speedscope's lines must be a subset of ember's |
//! | `inferno/fractional-samples/fractional.txt`, `with-space.txt` | rejects the file (fractional counts) | loads it | reference reader |
//! | `inferno/empty/empty.txt` | rejects the file | `LoadError::Empty` | asserted |
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use ember::error::LoadError;
use ember::model::{NodeId, Profile, SortKey, TopTable, ValueType};

/// Values are compared in millionths (ember keeps at most 6 decimals).
type Micro = i128;
const MICRO_DECIMALS: u8 = 6;

fn micro(v: i64, vt: &ValueType) -> Micro {
    Micro::from(v) * 10i128.pow(u32::from(MICRO_DECIMALS - vt.decimals))
}

fn micro_f64(x: f64) -> Micro {
    (x * 1e6).round() as Micro
}

/// A non-negative decimal (`12`, `1.5`, `6.`), extra decimals truncated.
fn micro_decimal(s: &str) -> Option<Micro> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return None;
    }
    let int: Micro = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut f: String = frac.chars().take(usize::from(MICRO_DECIMALS)).collect();
    while f.len() < usize::from(MICRO_DECIMALS) {
        f.push('0');
    }
    Some(int * 1_000_000 + f.parse::<Micro>().ok()?)
}

/// `stack value` lines as (stack, value) pairs, sorted.
type Folded = Vec<(String, Micro)>;

fn ember_folded(p: &Profile) -> Folded {
    let tree = common::default_tree(p);
    let vt = &p.value_types[tree.options.value];
    let mut out: Folded = common::all_nodes(&tree)
        .into_iter()
        .filter(|&n| tree.self_weight(n) != 0)
        .map(|n| {
            let stack = if n == NodeId::ROOT {
                "<no frames>".to_string()
            } else {
                common::stack_text(p, &tree, n)
            };
            (stack, micro(tree.self_weight(n), vt))
        })
        .collect();
    out.sort();
    out
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

/// speedscope's folded oracle; `# profile i: name` headers skipped (other `#`
/// lines are stacks speedscope made, see the austin deviation).
fn oracle_folded(text: &str) -> Folded {
    let mut out: Folded = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("# profile "))
        .map(|l| {
            let (stack, v) = l.rsplit_once(' ').expect("`stack value` line");
            (
                stack.to_string(),
                micro_decimal(v).unwrap_or_else(|| panic!("bad oracle value in {l:?}")),
            )
        })
        .collect();
    out.sort();
    out
}

/// Merges equal stacks and drops zero values.
fn merged(lines: impl IntoIterator<Item = (String, Micro)>) -> Folded {
    let mut m: BTreeMap<String, Micro> = BTreeMap::new();
    for (s, v) in lines {
        *m.entry(s).or_default() += v;
    }
    m.into_iter().filter(|(_, v)| *v != 0).collect()
}

/// The reference reader: the folded format as simply as it can be read.
fn reference_folded(bytes: &[u8]) -> Folded {
    let text = if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        let le = bytes[0] == 0xff;
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    let lines = text.split('\n').filter_map(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (stack, count) = line.rsplit_once(' ')?;
        let v = micro_decimal(count)?;
        let frames: Vec<&str> = stack
            .trim_end()
            .split(';')
            .filter(|f| !f.is_empty())
            .collect();
        Some((frames.join(";"), v))
    });
    merged(lines)
}

/// Self and total per function from folded lines, total counted once per stack.
fn top_from_folded(lines: &Folded) -> HashMap<String, (Micro, Micro)> {
    let mut out: HashMap<String, (Micro, Micro)> = HashMap::new();
    for (stack, v) in lines {
        let frames: Vec<&str> = stack.split(';').collect();
        for f in frames.iter().copied().collect::<HashSet<_>>() {
            out.entry(f.to_string()).or_default().1 += v;
        }
        if let Some(leaf) = frames.last() {
            out.entry((*leaf).to_string()).or_default().0 += v;
        }
    }
    out
}

fn ember_top(p: &Profile) -> HashMap<String, (Micro, Micro)> {
    let tree = common::default_tree(p);
    let vt = &p.value_types[tree.options.value];
    TopTable::build(p, &tree)
        .rows
        .iter()
        .map(|r| {
            (
                common::frame_name(p, r.frame),
                (micro(r.self_weight, vt), micro(r.total, vt)),
            )
        })
        .collect()
}

fn ember_total(p: &Profile) -> Micro {
    let tree = common::default_tree(p);
    micro(tree.total(NodeId::ROOT), &p.value_types[tree.options.value])
}

/// Differences between two sorted multisets, for a message.
fn diff_folded(what: &str, expected: &Folded, got: &Folded) -> Vec<String> {
    if expected == got {
        return Vec::new();
    }
    let count = |f: &Folded| {
        let mut m: BTreeMap<(String, Micro), i64> = BTreeMap::new();
        for l in f {
            *m.entry(l.clone()).or_default() += 1;
        }
        m
    };
    let (e, g) = (count(expected), count(got));
    let mut out = vec![format!(
        "{what}: {} expected lines, {} got",
        expected.len(),
        got.len()
    )];
    for (k, n) in &e {
        if g.get(k) != Some(n) {
            out.push(format!("  missing: {} {}", k.0, k.1));
        }
    }
    for (k, n) in &g {
        if e.get(k) != Some(n) {
            out.push(format!("  unexpected: {} {}", k.0, k.1));
        }
    }
    out.truncate(12);
    out
}

/// Whether every line of `part` is in `whole` (as a multiset).
fn is_subset(part: &Folded, whole: &Folded) -> bool {
    let mut pool: HashMap<&(String, Micro), usize> = HashMap::new();
    for l in whole {
        *pool.entry(l).or_default() += 1;
    }
    part.iter().all(|l| match pool.get_mut(l) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    })
}

/// Checks `p` against a speedscope summary (totals and both top lists).
fn check_summary(p: &Profile, summary: &serde_json::Value, problems: &mut Vec<String>) {
    let profiles = summary["profiles"].as_array().expect("profiles");
    if profiles.len() != 1 {
        problems.push(format!("speedscope made {} profiles", profiles.len()));
        return;
    }
    let sp = &profiles[0];
    let total = micro_f64(sp["totalWeight"].as_f64().expect("totalWeight"));
    if ember_total(p) != total {
        problems.push(format!(
            "total: speedscope {total}, ember {} (millionths)",
            ember_total(p)
        ));
    }
    let tree = common::default_tree(p);
    let vt = &p.value_types[tree.options.value];
    let top = ember_top(p);
    for (list, key) in [
        ("topBySelf", SortKey::SelfWeight),
        ("topByTotal", SortKey::Total),
    ] {
        let entries = sp[list].as_array().expect("top list");
        let mut table = TopTable::build(p, &tree);
        table.sort(p, key, true);
        let column = |self_w: Micro, total: Micro| match key {
            SortKey::SelfWeight => self_w,
            _ => total,
        };
        let theirs: Vec<Micro> = entries
            .iter()
            .map(|e| {
                column(
                    micro_f64(e["self"].as_f64().expect("self")),
                    micro_f64(e["total"].as_f64().expect("total")),
                )
            })
            .collect();
        let ours: Vec<Micro> = table
            .rows
            .iter()
            .take(entries.len())
            .map(|r| column(micro(r.self_weight, vt), micro(r.total, vt)))
            .collect();
        if theirs != ours {
            problems.push(format!("{list}: values {theirs:?} vs ember {ours:?}"));
        }
        for e in entries {
            let name = e["name"].as_str().expect("name");
            let want = (
                micro_f64(e["self"].as_f64().expect("self")),
                micro_f64(e["total"].as_f64().expect("total")),
            );
            match top.get(name) {
                Some(got) if *got == want => {}
                got => problems.push(format!(
                    "{list}: {name:?} speedscope {want:?}, ember {got:?}"
                )),
            }
        }
    }
}

/// The folded oracle next to `input`, gzipped or not.
fn folded_oracle_path(input: &Path) -> Option<PathBuf> {
    ["speedscope-folded.txt", "speedscope-folded.txt.gz"]
        .iter()
        .map(|s| with_suffix(input, s))
        .find(|p| p.exists())
}

fn with_suffix(input: &Path, suffix: &str) -> PathBuf {
    let mut s = input.as_os_str().to_owned();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

fn read_summary(input: &Path) -> serde_json::Value {
    let path = with_suffix(input, "speedscope-summary.json");
    serde_json::from_str(&read_text(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Expected warnings (line numbers) per file; every other file must have none.
fn expected_warning_lines(rel: &str) -> &'static [u64] {
    match rel {
        "speedscope/simple-with-invalids.txt" => &[2, 8],
        "inferno/bad-lines/bad-lines.txt" => &[3, 6],
        "inferno-diff/bad_before.txt" => &[3],
        _ => &[],
    }
}

/// How speedscope's folded oracle is normalised for a documented deviation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Normalise {
    /// `leaf c1` -> `leaf` (speedscope's reading of differential lines).
    StripLeafCount,
    /// Stacks starting with `#` removed (header lines speedscope read as stacks).
    DropHashStacks,
    /// Whitespace-only frames removed (`...;  3` gives speedscope a `" "` leaf).
    DropBlankFrames,
}

fn normalisation(rel: &str) -> Option<Normalise> {
    match rel {
        DIFFERENTIAL => Some(Normalise::StripLeafCount),
        "inferno/austin/flames.txt" => Some(Normalise::DropHashStacks),
        "speedscope/perf-vertx-stacks-01-collapsed-all.txt"
        | "inferno/unsorted-input/perf-vertx-stacks-01-collapsed-all-unsorted.txt"
        | "inferno/multiple-inputs/perf-vertx-stacks-01-collapsed-all-unsorted-1.txt" => {
            Some(Normalise::DropBlankFrames)
        }
        _ => None,
    }
}

fn normalise(theirs: &Folded, how: Normalise) -> Folded {
    merged(theirs.iter().filter_map(|(stack, v)| {
        let stack = match how {
            Normalise::StripLeafCount => match stack.rsplit_once(' ') {
                Some((s, c)) if micro_decimal(c).is_some() => s.to_string(),
                _ => stack.clone(),
            },
            Normalise::DropHashStacks if stack.starts_with('#') => return None,
            Normalise::DropHashStacks => stack.clone(),
            Normalise::DropBlankFrames => stack
                .split(';')
                .filter(|f| !f.trim().is_empty())
                .collect::<Vec<_>>()
                .join(";"),
        };
        Some((stack, *v))
    }))
}

const DIFFERENTIAL: &str =
    "inferno/differential/perf-cycles-instructions-01-collapsed-all-diff.txt";
const ZERO_FRACTIONALS: &str = "inferno/fractional-samples/zero-fractionals.txt";
const BEFORE_FRACTIONALS: &str = "inferno-diff/before_fractionals.txt";

enum Verdict {
    Pass,
    /// Passed a check other than the plain oracle comparison (see the table above).
    PassDeviation,
    Fail(Vec<String>),
}

fn check_file(folded_dir: &Path, input: &Path) -> Verdict {
    let rel = input
        .strip_prefix(folded_dir)
        .expect("under the folder")
        .to_string_lossy()
        .replace('\\', "/");
    let has_summary = with_suffix(input, "speedscope-summary.json").exists();
    let loaded = common::load_path(input);
    let mut problems = Vec::new();

    if !has_summary {
        // speedscope rejected the file: ember loads it, or fails cleanly.
        return match (rel.as_str(), loaded) {
            ("inferno/empty/empty.txt", Err(LoadError::Empty { .. })) => Verdict::PassDeviation,
            ("inferno/empty/empty.txt", other) => {
                Verdict::Fail(vec![format!("expected LoadError::Empty, got {other:?}")])
            }
            (_, Err(e)) => {
                let msg = e.to_string();
                if msg.contains(input.file_name().and_then(|n| n.to_str()).unwrap_or("?")) {
                    Verdict::PassDeviation
                } else {
                    Verdict::Fail(vec![format!("error does not name the file: {msg}")])
                }
            }
            (_, Ok(p)) => {
                let reference = reference_folded(&std::fs::read(input).expect("read"));
                problems.extend(diff_folded(
                    "reference reader",
                    &reference,
                    &ember_folded(&p),
                ));
                if !p.warnings.is_empty() {
                    problems.push(format!("unexpected warnings: {}", p.warnings.summary()));
                }
                if problems.is_empty() {
                    Verdict::PassDeviation
                } else {
                    Verdict::Fail(problems)
                }
            }
        };
    }

    let p = match loaded {
        Ok(p) => p,
        Err(e) => return Verdict::Fail(vec![format!("ember failed to load it: {e}")]),
    };
    let ours = ember_folded(&p);
    let oracle_path = folded_oracle_path(input);
    let theirs = oracle_path.as_deref().map(|o| oracle_folded(&read_text(o)));
    if theirs.is_none() {
        problems.push("no speedscope-folded oracle".into());
    }
    let warning_lines: Vec<u64> = p.warnings.first.iter().map(|w| w.line).collect();
    if warning_lines != expected_warning_lines(&rel)
        || p.warnings.count != warning_lines.len() as u64
    {
        problems.push(format!(
            "warnings at lines {warning_lines:?} (count {}), expected {:?}",
            p.warnings.count,
            expected_warning_lines(&rel)
        ));
    }
    let mut deviation = false;
    match rel.as_str() {
        _ if normalisation(&rel).is_some() => {
            deviation = true;
            let how = normalisation(&rel).expect("checked");
            if (how == Normalise::StripLeafCount) != (p.value_types.len() == 2) {
                problems.push(format!("{} value types", p.value_types.len()));
            }
            if how == Normalise::StripLeafCount && p.default_value != 1 {
                problems.push("the differential default is not the second count".into());
            }
            if let Some(theirs) = &theirs {
                // The oracle pair agrees with itself before it is normalised.
                check_total_only(oracle_sum(theirs), &read_summary(input), &mut problems);
                let normalised = normalise(theirs, how);
                if normalised == *theirs {
                    problems.push(format!("{how:?} changed nothing: deviation gone?"));
                }
                if ember_total(&p) != oracle_sum(&normalised) {
                    problems.push(format!(
                        "total: normalised speedscope {}, ember {}",
                        oracle_sum(&normalised),
                        ember_total(&p)
                    ));
                }
                problems.extend(diff_folded(
                    "normalised speedscope folded",
                    &normalised,
                    &ours,
                ));
                if top_from_folded(&normalised) != ember_top(&p) {
                    problems.push("top table differs from the normalised oracle's".into());
                }
            }
        }
        ZERO_FRACTIONALS => {
            deviation = true;
            let twin = input.with_file_name("no-fractionals.txt");
            check_summary(&p, &read_summary(&twin), &mut problems);
            let twin_folded = folded_oracle_path(&twin).map(|o| oracle_folded(&read_text(&o)));
            match twin_folded {
                Some(t) => problems.extend(diff_folded("no-fractionals oracle", &t, &ours)),
                None => problems.push("no oracle for no-fractionals.txt".into()),
            }
            if let Some(theirs) = &theirs
                && !is_subset(theirs, &ours)
            {
                problems.push("speedscope's lines are not a subset of ember's".into());
            }
        }
        BEFORE_FRACTIONALS => {
            deviation = true;
            let reference = reference_folded(&std::fs::read(input).expect("read"));
            problems.extend(diff_folded("reference reader", &reference, &ours));
            if let Some(theirs) = &theirs
                && !is_subset(theirs, &ours)
            {
                problems.push("speedscope's lines are not a subset of ember's".into());
            }
        }
        _ => {
            check_summary(&p, &read_summary(input), &mut problems);
            if let Some(theirs) = &theirs {
                problems.extend(diff_folded("speedscope folded", theirs, &ours));
            }
            let reference = reference_folded(&std::fs::read(input).expect("read"));
            problems.extend(diff_folded("reference reader", &reference, &ours));
        }
    }
    match (problems.is_empty(), deviation) {
        (true, false) => Verdict::Pass,
        (true, true) => Verdict::PassDeviation,
        (false, _) => Verdict::Fail(problems),
    }
}

fn oracle_sum(f: &Folded) -> Micro {
    f.iter().map(|(_, v)| v).sum()
}

/// Whether `total` is the summary's `totalWeight`.
fn check_total_only(total: Micro, summary: &serde_json::Value, problems: &mut Vec<String>) {
    let want = micro_f64(
        summary["profiles"][0]["totalWeight"]
            .as_f64()
            .expect("totalWeight"),
    );
    if total != want {
        problems.push(format!("total: speedscope summary {want}, got {total}"));
    }
}

/// Inputs under `dir` (recursively) that have a speedscope summary or error oracle.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if with_suffix(&path, "speedscope-summary.json").exists()
                || with_suffix(&path, "speedscope-error.txt").exists()
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

use common::say;

#[test]
fn folded_matches_speedscope() {
    let Some(corpus) = common::corpus("conformance suite") else {
        return;
    };
    let folded = corpus.join("folded");
    assert!(folded.is_dir(), "{} is missing", folded.display());
    let files = inputs(&folded);
    assert!(
        files.len() >= 20,
        "only {} folded inputs with oracles under {}",
        files.len(),
        folded.display()
    );
    let (mut pass, mut via_deviation) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let verdict = std::panic::catch_unwind(|| check_file(&folded, file))
            .unwrap_or_else(|_| Verdict::Fail(vec!["panicked".into()]));
        let rel = file
            .strip_prefix(&folded)
            .unwrap_or(file)
            .display()
            .to_string();
        match verdict {
            Verdict::Pass => pass += 1,
            Verdict::PassDeviation => {
                pass += 1;
                via_deviation += 1;
            }
            Verdict::Fail(problems) => {
                say(&format!("FAIL folded/{rel}"));
                for p in &problems {
                    say(&format!("    {p}"));
                }
                failures.push(rel);
            }
        }
    }
    say(&format!(
        "folded: {pass}/{} pass ({via_deviation} through a documented deviation)",
        files.len()
    ));
    assert!(
        failures.is_empty(),
        "folded conformance failures: {failures:?}"
    );
}

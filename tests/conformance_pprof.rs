//! Conformance of the pprof reader against `go tool pprof` in the shared corpus.
//!
//! Reads `$EMBER_CORPUS` (the `shared/corpus` folder; see its MANIFEST.md). Unset:
//! the suite prints that it was skipped and passes. Set to a folder that does not
//! exist: the suite fails.
//!
//! For every input under `$EMBER_CORPUS/pprof/`:
//!
//! * `<file>.pprof-top.txt[.gz]` (`go tool pprof -symbolize=none -top
//!   -nodecount=1000000 -nodefraction=0 -edgefraction=0`, default sample index) and
//!   `<file>.pprof-top.sample_index=<type>.txt[.gz]`: the file must be detected as
//!   pprof, and for the oracle's sample type ember's `TopTable` must give, printed
//!   the way pprof prints values (its output unit, `%.2f`, `.00` trimmed):
//!   - the header's "accounting for" figure = the sum of ember's self weights;
//!   - the header's total = the sum of |value| over ember's samples (pprof's
//!     `computeTotal` adds absolute values, which matters for delta profiles);
//!   - the same set of function names (pprof's ` (inline)` / ` (partial-inline)`
//!     labels removed; functions with zero flat and cum are left out by pprof and
//!     so by us) and, per name, flat = ember's self and cum = ember's total;
//!   - for the default-index oracle, ember's default value type is pprof's.
//! * `<file>.pprof-error.txt` (pprof refused the file): ember must fail with an
//!   error or load it with warnings, and must fail when made to read it as pprof.
//!   Never a panic.
//!
//! Every input under `$EMBER_CORPUS/pprof-legacy/` (pprof's legacy text formats,
//! which ember does not read as pprof) must not be detected as pprof, and must be
//! refused cleanly when read with `Format::Pprof`.
//!
//! Intended deviations from `go tool pprof` (each is still checked, differently):
//!
//! | input | pprof | ember | how it is checked |
//! |---|---|---|---|
//! | `google-pprof/fuzz-7e3c9248.bin` (`--- heapz 1 ---` text) | tries its legacy heap parser and fails | not pprof to ember's probe: detection gives it to another reader (folded reads `0 0 @ 0` as one line with warnings), and as pprof it is refused as a protobuf | error oracle: error or warnings, and an error when forced to pprof |
//!
//! No other deviation is accepted: any other mismatch fails the suite.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use ember::error::LoadError;
use ember::formats::{self, Format, LoadOptions};
use ember::model::{CallTree, Profile, TopTable, TreeOptions};
use ember::sources::input::{Progress, Source};

use common::say;

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

fn load(path: &Path, format: Option<Format>) -> Result<Profile, LoadError> {
    let options = LoadOptions {
        format,
        ..LoadOptions::default()
    };
    formats::load(
        &Source::Path(path.to_path_buf()),
        &options,
        &Progress::new(),
    )
}

// ---------------------------------------------------------------------------
// pprof's units and number printing.

/// (dimension, factor to the base unit) of a unit name or printed suffix, as
/// pprof's `measurement` package knows them; `None` for plain numbers.
fn unit_factor(unit: &str) -> Option<(&'static str, f64)> {
    const DAY: f64 = 86_400e9;
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "ns" | "nanosecond" | "nanoseconds" => ("time", 1.0),
        "us" | "μs" | "microsecond" | "microseconds" => ("time", 1e3),
        "ms" | "millisecond" | "milliseconds" => ("time", 1e6),
        "s" | "sec" | "second" | "seconds" => ("time", 1e9),
        "min" | "mins" | "minute" | "minutes" => ("time", 60e9),
        "hr" | "hrs" | "hour" | "hours" => ("time", 3600e9),
        "day" | "days" => ("time", DAY),
        "wk" | "wks" | "week" | "weeks" => ("time", 7.0 * DAY),
        "yr" | "yrs" | "year" | "years" => ("time", 365.0 * DAY),
        "b" | "byte" | "bytes" => ("memory", 1.0),
        "kb" | "kbyte" | "kilobyte" | "kilobytes" => ("memory", 1024.0),
        "mb" | "mbyte" | "megabyte" | "megabytes" => ("memory", 1024.0 * 1024.0),
        "gb" | "gbyte" | "gigabyte" | "gigabytes" => ("memory", 1024f64.powi(3)),
        "tb" | "tbyte" | "terabyte" | "terabytes" => ("memory", 1024f64.powi(4)),
        "pb" | "pbyte" | "petabyte" | "petabytes" => ("memory", 1024f64.powi(5)),
        _ => return None,
    })
}

/// The unit suffix of a printed value (`1.50s` -> `s`, `42` -> ``).
fn suffix(printed: &str) -> &str {
    let i = printed
        .char_indices()
        .rfind(|(_, c)| c.is_ascii_digit() || *c == '.')
        .map_or(0, |(i, c)| i + c.len_utf8());
    &printed[i..]
}

/// `raw` (in `sample_unit`) as pprof prints it in the unit of suffix `out`.
fn pprof_value(raw: i64, sample_unit: &str, out: &str) -> String {
    let v = match (unit_factor(sample_unit), unit_factor(out)) {
        (Some((d1, from)), Some((d2, to))) if d1 == d2 => raw as f64 * from / to,
        _ => raw as f64,
    };
    let s = format!("{v:.2}");
    let s = s.strip_suffix(".00").unwrap_or(&s);
    if s == "0" || s == "-0" {
        "0".to_string()
    } else {
        format!("{s}{out}")
    }
}

// ---------------------------------------------------------------------------
// The `-top` oracle.

struct TopOracle {
    accounted: String,
    total: String,
    /// name -> (flat, cum) as printed.
    rows: BTreeMap<String, (String, String)>,
    duplicate_names: Vec<String>,
    type_line: Option<String>,
}

fn parse_top(text: &str) -> TopOracle {
    let mut o = TopOracle {
        accounted: String::new(),
        total: String::new(),
        rows: BTreeMap::new(),
        duplicate_names: Vec::new(),
        type_line: None,
    };
    let mut in_rows = false;
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("Type: ") {
            o.type_line = Some(t.to_string());
        }
        if let Some(rest) = line.strip_prefix("Showing nodes accounting for ") {
            let (acc, rest) = rest.split_once(", ").expect("accounting figure");
            let (_, rest) = rest.split_once(" of ").expect("`of TOTAL total`");
            o.accounted = acc.to_string();
            o.total = rest.strip_suffix(" total").expect("` total`").to_string();
            continue;
        }
        if line.trim_start().starts_with("flat ") && line.contains("cum%") {
            in_rows = true;
            continue;
        }
        if !in_rows || line.trim().is_empty() {
            continue;
        }
        // `%10s %s %s %10s %s  %s`: five columns, two blanks, then the name.
        let mut rest = line;
        let mut cols = Vec::new();
        for _ in 0..5 {
            let t = rest.trim_start();
            let end = t.find(' ').unwrap_or(t.len());
            cols.push(&t[..end]);
            rest = &t[end..];
        }
        let name = rest.strip_prefix("  ").unwrap_or(rest.trim_start());
        let name = name
            .strip_suffix(" (inline)")
            .or_else(|| name.strip_suffix(" (partial-inline)"))
            .unwrap_or(name);
        if o.rows
            .insert(name.to_string(), (cols[0].to_string(), cols[3].to_string()))
            .is_some()
        {
            o.duplicate_names.push(name.to_string());
        }
    }
    o
}

/// The oracle files of `input`: (path, sample type or `None` for the default).
fn top_oracles(input: &Path) -> Vec<(PathBuf, Option<String>)> {
    let dir = input.parent().expect("a folder");
    let name = input.file_name().expect("a name").to_string_lossy();
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("readable folder") {
        let path = e.expect("entry").path();
        let file = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let Some(rest) = file.strip_prefix(&format!("{name}.pprof-top")) else {
            continue;
        };
        let rest = rest.strip_suffix(".gz").unwrap_or(rest);
        let Some(rest) = rest.strip_suffix(".txt") else {
            continue;
        };
        if rest.is_empty() {
            out.push((path, None));
        } else if let Some(t) = rest.strip_prefix(".sample_index=") {
            out.push((path, Some(t.to_string())));
        }
    }
    out.sort();
    out
}

/// Compares ember's table for `profile` with one `-top` oracle.
fn check_top(profile: &Profile, oracle: &Path, sample_type: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    let o = parse_top(&read_text(oracle));
    let index = match sample_type {
        None => {
            let want = o.type_line.clone().unwrap_or_default();
            let got = &profile.value_types[profile.default_value].kind;
            if &want != got {
                problems.push(format!(
                    "default sample type: pprof {want:?}, ember {got:?}"
                ));
            }
            profile.default_value
        }
        Some(t) => match profile.value_types.iter().position(|vt| vt.kind == t) {
            Some(i) => i,
            None => return vec![format!("ember has no sample type {t:?}")],
        },
    };
    if !o.duplicate_names.is_empty() {
        problems.push(format!(
            "pprof prints several nodes named {:?}",
            o.duplicate_names
        ));
    }
    let unit = profile.value_types[index].unit.name().to_string();
    let out = suffix(&o.total).to_string();
    let show = |v: i64| pprof_value(v, &unit, &out);

    let tree = CallTree::build(
        profile,
        TreeOptions {
            value: index,
            ..TreeOptions::default()
        },
    );
    let table = TopTable::build(profile, &tree);
    let n = profile.value_types.len();
    let abs_total: i64 = profile
        .samples
        .values
        .iter()
        .skip(index)
        .step_by(n)
        .map(|v| v.abs())
        .sum();
    let self_sum: i64 = table.rows.iter().map(|r| r.self_weight).sum();
    if show(abs_total) != o.total {
        problems.push(format!(
            "total: pprof {}, ember {} ({abs_total})",
            o.total,
            show(abs_total)
        ));
    }
    if show(self_sum) != o.accounted {
        problems.push(format!(
            "accounted for: pprof {}, ember {} ({self_sum})",
            o.accounted,
            show(self_sum)
        ));
    }
    let ours: BTreeMap<String, (i64, i64)> = table
        .rows
        .iter()
        .filter(|r| r.self_weight != 0 || r.total != 0)
        .map(|r| {
            (
                profile.frames.name(r.frame).into_owned(),
                (r.self_weight, r.total),
            )
        })
        .collect();
    let mut bad_rows = 0;
    for (name, (flat, cum)) in &o.rows {
        let line = match ours.get(name) {
            None => Some(format!("{name:?}: in pprof ({flat} {cum}), not in ember")),
            Some(&(s, t)) if (show(s), show(t)) != (flat.clone(), cum.clone()) => Some(format!(
                "{name:?}: pprof flat {flat} cum {cum}, ember {} {} ({s} {t})",
                show(s),
                show(t)
            )),
            _ => None,
        };
        if let Some(l) = line {
            bad_rows += 1;
            if bad_rows <= 10 {
                problems.push(l);
            }
        }
    }
    for (name, (s, t)) in &ours {
        if !o.rows.contains_key(name) {
            bad_rows += 1;
            if bad_rows <= 10 {
                problems.push(format!("{name:?}: in ember ({s} {t}), not in pprof"));
            }
        }
    }
    if bad_rows > 10 {
        problems.push(format!("... {bad_rows} row problems in all"));
    }
    problems
}

// ---------------------------------------------------------------------------
// The suite.

/// Inputs (not oracle files) under `dir`, recursively, sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            let name = path.file_name().expect("a name").to_string_lossy();
            if path.is_dir() {
                todo.push(path);
            } else if !name.contains(".pprof-")
                && !name.contains(".speedscope-")
                && !name.ends_with(".string")
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// What happened to one oracle file.
enum Verdict {
    Pass,
    Fail(Vec<String>),
}

fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

fn check_input(input: &Path) -> Vec<(String, Verdict)> {
    let mut out = Vec::new();
    let error_oracle = PathBuf::from(format!("{}.pprof-error.txt", input.display()));
    if error_oracle.exists() {
        let verdict = match caught(|| (load(input, None), load(input, Some(Format::Pprof)))) {
            Err(p) => Verdict::Fail(vec![format!("panicked: {p}")]),
            Ok((detected, forced)) => {
                let mut problems = Vec::new();
                if let Some(p) = detected.as_ref().ok().filter(|p| p.warnings.is_empty()) {
                    problems.push(format!(
                        "pprof refused it; ember loaded it as {} without a warning",
                        p.format
                    ));
                }
                if let Ok(p) = forced {
                    problems.push(format!(
                        "read as pprof, ember loaded {} samples",
                        p.samples.len()
                    ));
                }
                if problems.is_empty() {
                    Verdict::Pass
                } else {
                    Verdict::Fail(problems)
                }
            }
        };
        out.push(("pprof-error".to_string(), verdict));
    }
    let oracles = top_oracles(input);
    if oracles.is_empty() {
        return out;
    }
    let profile = match caught(|| load(input, None)) {
        Err(p) => Err(format!("panicked: {p}")),
        Ok(Err(e)) => Err(format!("ember refused it: {e}")),
        Ok(Ok(p)) if !p.format.starts_with("pprof") => {
            Err(format!("detected as {}, not pprof", p.format))
        }
        Ok(Ok(p)) => Ok(p),
    };
    for (oracle, sample_type) in oracles {
        let label = oracle
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .trim_start_matches(&*input.file_name().expect("a name").to_string_lossy())
            .trim_start_matches('.')
            .to_string();
        let verdict = match &profile {
            Err(e) => Verdict::Fail(vec![e.clone()]),
            Ok(p) => match caught(|| check_top(p, &oracle, sample_type.as_deref())) {
                Err(e) => Verdict::Fail(vec![format!("panicked: {e}")]),
                Ok(problems) if problems.is_empty() => Verdict::Pass,
                Ok(problems) => Verdict::Fail(problems),
            },
        };
        out.push((label, verdict));
    }
    out
}

#[test]
fn pprof_matches_go_tool_pprof() {
    let Some(corpus) = common::corpus("pprof conformance suite") else {
        return;
    };
    let dir = corpus.join("pprof");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let files = inputs(&dir);
    assert!(
        files.len() >= 15,
        "only {} pprof inputs under {}",
        files.len(),
        dir.display()
    );
    let (mut pass, mut total) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .display()
            .to_string();
        for (oracle, verdict) in check_input(file) {
            total += 1;
            match verdict {
                Verdict::Pass => pass += 1,
                Verdict::Fail(problems) => {
                    say(&format!("FAIL pprof/{rel} [{oracle}]"));
                    for p in &problems {
                        say(&format!("    {p}"));
                    }
                    failures.push(format!("{rel} [{oracle}]"));
                }
            }
        }
    }
    say(&format!("pprof: {pass}/{total} pass"));
    assert!(total >= 40, "only {total} pprof oracle files checked");
    assert!(
        failures.is_empty(),
        "pprof conformance failures: {failures:?}"
    );
}

#[test]
fn legacy_pprof_text_is_refused_cleanly() {
    let Some(corpus) = common::corpus("pprof-legacy conformance") else {
        return;
    };
    let dir = corpus.join("pprof-legacy");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let files = inputs(&dir);
    assert!(files.len() >= 10, "only {} legacy inputs", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .display()
            .to_string();
        match caught(|| (load(file, None), load(file, Some(Format::Pprof)))) {
            Err(p) => failures.push(format!("{rel}: panicked: {p}")),
            Ok((detected, forced)) => {
                if detected.is_ok_and(|p| p.format.starts_with("pprof")) {
                    failures.push(format!("{rel}: detected as pprof"));
                }
                match forced {
                    Err(LoadError::Invalid { .. }) => {}
                    Err(e) => {
                        failures.push(format!("{rel}: forced to pprof, unexpected error {e}"))
                    }
                    Ok(_) => failures.push(format!("{rel}: forced to pprof, it loaded")),
                }
            }
        }
    }
    say(&format!(
        "pprof-legacy: {}/{} refused cleanly",
        files.len() - failures.len(),
        files.len()
    ));
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every file of the corpus outside `pprof/` (text formats, JFR and other
/// binaries, oracles): the pprof probe must not claim it.
#[test]
fn probe_claims_no_other_corpus_file() {
    let Some(corpus) = common::corpus("pprof probe check") else {
        return;
    };
    let mut files = Vec::new();
    let mut todo = vec![corpus.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            if path.is_dir() {
                if path != corpus.join("pprof") {
                    todo.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 300, "only {} corpus files", files.len());
    let mut claimed = Vec::new();
    for file in &files {
        let opened = ember::sources::input::open(&Source::Path(file.clone()), &Progress::new())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let complete = opened.head.len() < ember::sources::input::HEAD_LEN;
        if ember::formats::pprof::probe(&opened.head, complete) == Some(true) {
            claimed.push(
                file.strip_prefix(&corpus)
                    .unwrap_or(file)
                    .display()
                    .to_string(),
            );
        }
    }
    say(&format!(
        "pprof probe: 0 of {} other corpus files should be claimed, {} were",
        files.len(),
        claimed.len()
    ));
    assert!(claimed.is_empty(), "claimed as pprof: {claimed:#?}");
}

#[test]
fn pprof_values_print_like_pprof() {
    assert_eq!(pprof_value(1_760_000_000, "nanoseconds", "s"), "1.76s");
    assert_eq!(pprof_value(0, "nanoseconds", "s"), "0");
    assert_eq!(pprof_value(52_631_578, "nanoseconds", "ms"), "52.63ms");
    assert_eq!(pprof_value(1_765_955, "bytes", "MB"), "1.68MB");
    assert_eq!(pprof_value(176, "count", ""), "176");
    assert_eq!(suffix("368.42ms"), "ms");
    assert_eq!(suffix("176"), "");
    assert_eq!(suffix("-1.5kB"), "kB");
}

/// Writes a large synthetic profile (200k samples of depth 24 over 50k functions,
/// about 20 MB) to `$EMBER_PPROF_BIG` or `/tmp/ember-big.pb`, for timing
/// `ember top` on it. Run with `--ignored`.
#[test]
#[ignore]
fn write_large_synthetic_profile() {
    use ember::formats::pprof::proto;
    use prost::Message;

    let path = std::env::var_os("EMBER_PPROF_BIG")
        .map_or_else(|| PathBuf::from("/tmp/ember-big.pb"), PathBuf::from);
    const FUNCTIONS: u64 = 50_000;
    const SAMPLES: usize = 200_000;
    const DEPTH: usize = 24;
    let mut p = proto::Profile::default();
    p.string_table.push(Vec::new());
    for s in ["samples", "count", "cpu", "nanoseconds"] {
        p.string_table.push(s.as_bytes().to_vec());
    }
    p.sample_type = vec![
        proto::ValueType { r#type: 1, unit: 2 },
        proto::ValueType { r#type: 3, unit: 4 },
    ];
    p.period_type = Some(proto::ValueType { r#type: 3, unit: 4 });
    p.period = 10_000_000;
    p.mapping.push(proto::Mapping {
        id: 1,
        filename: p.string_table.len() as i64,
        has_functions: true,
        ..proto::Mapping::default()
    });
    p.string_table.push(b"/usr/local/bin/server".to_vec());
    for i in 1..=FUNCTIONS {
        let name = p.string_table.len() as i64;
        p.string_table.push(
            format!(
                "github.com/example/pkg{}.(*Type{}).Method{i}",
                i % 97,
                i % 13
            )
            .into_bytes(),
        );
        let file = p.string_table.len() as i64;
        p.string_table
            .push(format!("/src/pkg{}/file{}.go", i % 97, i % 31).into_bytes());
        p.function.push(proto::Function {
            id: i,
            name,
            system_name: name,
            filename: file,
            start_line: (i % 500) as i64,
        });
        // Every 10th location also has an inlined callee.
        let mut line = vec![proto::Line {
            function_id: i,
            line: (i % 900) as i64 + 1,
            column: 0,
        }];
        if i % 10 == 0 {
            line.insert(
                0,
                proto::Line {
                    function_id: (i * 7) % FUNCTIONS + 1,
                    line: 3,
                    column: 0,
                },
            );
        }
        p.location.push(proto::Location {
            id: i,
            mapping_id: 1,
            address: 0x40_0000 + i * 16,
            line,
            is_folded: false,
        });
    }
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..SAMPLES {
        // A call tree with fan-out 4 below a few roots: realistic sharing.
        let mut ids = Vec::with_capacity(DEPTH);
        let mut cur = next() % 8;
        for _ in 0..DEPTH {
            cur = (cur * 4 + next() % 4).wrapping_mul(0x9E37_79B9) % FUNCTIONS;
            ids.push(cur + 1);
        }
        ids.reverse();
        let n = (next() % 5 + 1) as i64;
        p.sample.push(proto::Sample {
            location_id: ids,
            value: vec![n, n * 10_000_000],
            label: Vec::new(),
        });
    }
    let bytes = p.encode_to_vec();
    std::fs::write(&path, &bytes).expect("writing the profile");
    say(&format!("wrote {} ({} bytes)", path.display(), bytes.len()));
}

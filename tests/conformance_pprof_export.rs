//! ember's pprof export read back by `go tool pprof`, against the original.
//!
//! For every pprof file under `$EMBER_CORPUS/pprof/` that pprof accepts (it has
//! a `.pprof-top.txt` oracle), and for one profile recorded here with pprof-rs
//! (`tests/fixtures/export/rust-pprofrs.cpu.pb`): `ember convert FILE -o
//! out.pb.gz`, then `go tool pprof -top` of the export must print the same rows
//! as of the original: the same names (pprof simplifies a name again when its
//! system name equals it, so a demangled system name would turn
//! `<u64>::wrapping_add` into `::wrapping_add`), the same `(inline)` marks, the
//! same flat and cum. Compared twice per sample type: with every node
//! (`-nodecount=1000000 -nodefraction=0 -edgefraction=0`) and with pprof's
//! default cut, as a user types it.
//!
//! Needs `go`. Where it is missing the suite says so and passes, unless
//! `EMBER_REQUIRE_GO` is set (as `.ci/run` sets it after installing Go): then it
//! fails. `$EMBER_CORPUS` unset: only the fixture is checked.
//!
//! Intended deviations: none. Locations without a function (unsymbolized
//! addresses) are compared by their rows too, which is why such files are in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::say;

/// `go tool pprof -top` of `path` with `flags`; the rows under the column
/// header and the "Showing nodes" line, or pprof's error.
fn top(path: &Path, flags: &[&str]) -> Result<Vec<String>, String> {
    let o = Command::new("go")
        .args(["tool", "pprof", "-symbolize=none", "-top"])
        .args(flags)
        .arg(path)
        .env("PPROF_BINARY_PATH", "/nonexistent")
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut rows = Vec::new();
    let mut in_rows = false;
    for line in text.lines() {
        if line.starts_with("Showing nodes") || line.starts_with("Dropped") {
            rows.push(line.to_string());
        }
        if line.trim_start().starts_with("flat ") {
            in_rows = true;
        } else if in_rows {
            rows.push(line.to_string());
        }
    }
    Ok(rows)
}

/// The sample types pprof names for `path`, from its `-raw` dump's header.
fn sample_types(path: &Path) -> Vec<String> {
    let o = Command::new("go")
        .args(["tool", "pprof", "-symbolize=none", "-raw"])
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    // "PeriodType: ...", then "Samples:", then a line of "type/unit" words.
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Samples:"));
    lines.next();
    lines
        .next()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.split('/').next())
                .map(|t| t.trim_end_matches('*').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Exports `input` with `ember convert` and compares pprof's tables of both.
/// Returns the mismatches, one line each.
fn check(input: &Path, out_dir: &Path) -> Vec<String> {
    let out = out_dir.join(format!(
        "{}.pb.gz",
        input.file_name().unwrap().to_string_lossy()
    ));
    let o = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("convert")
        .arg(input)
        .arg("-o")
        .arg(&out)
        .env("EMBER_NO_SUPERVISOR", "1")
        .output()
        .unwrap();
    let name = input.display();
    if !o.status.success() {
        return vec![format!(
            "{name}: ember convert failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )];
    }
    let mut problems = Vec::new();
    let mut flag_sets: Vec<Vec<String>> = vec![vec![]];
    for t in sample_types(input) {
        flag_sets.push(vec![format!("-sample_index={t}")]);
    }
    for flags in flag_sets {
        for cut in [
            &[][..],
            &["-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"][..],
        ] {
            let mut all: Vec<&str> = flags.iter().map(String::as_str).collect();
            all.extend_from_slice(cut);
            let want = top(input, &all);
            let got = top(&out, &all);
            match (want, got) {
                (Ok(want), Ok(got)) if want == got => {}
                (Ok(want), Ok(got)) => {
                    let first = want
                        .iter()
                        .zip(&got)
                        .find(|(a, b)| a != b)
                        .map(|(a, b)| format!("\n  original: {a}\n  export:   {b}"))
                        .unwrap_or_else(|| format!(" ({} rows against {})", want.len(), got.len()));
                    problems.push(format!("{name} {all:?}: tables differ{first}"));
                }
                (Ok(_), Err(e)) => {
                    problems.push(format!("{name} {all:?}: pprof refused the export: {e}"))
                }
                (Err(_), _) => {} // pprof refuses the original this way too
            }
        }
    }
    problems
}

fn corpus_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.join("pprof")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let top = PathBuf::from(format!("{}.pprof-top.txt", p.display()));
            let top_gz = PathBuf::from(format!("{}.pprof-top.txt.gz", p.display()));
            if top.exists() || top_gz.exists() {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn go_tool_pprof_reads_the_export_as_the_original() {
    if !common::go_available("pprof export conformance") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = vec![repo.join("tests/fixtures/export/rust-pprofrs.cpu.pb")];
    if let Some(corpus) = common::corpus("pprof export conformance") {
        let found = corpus_inputs(&corpus);
        assert!(found.len() >= 15, "only {} pprof inputs", found.len());
        inputs.extend(found);
    }
    let problems: Vec<String> = inputs.iter().flat_map(|i| check(i, dir.path())).collect();
    say(&format!("pprof export: {} inputs checked", inputs.len()));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

//! Conformance of the formats ember reads through inferno's collapsers (DTrace,
//! macOS `sample`, GHC `.prof`) against inferno's own expected outputs in the
//! shared corpus (`other/*/results/`, see its MANIFEST.md).
//!
//! `$EMBER_CORPUS` unset: skipped. Set to a missing folder: fails.
//!
//! ember detects the format by content, collapses with inferno's default options
//! and reads the folded result; its normalised folded output (`ember convert`)
//! must equal inferno's expected output as a multiset of `stack count` lines.
//!
//! Intended deviation: inferno's GHC collapser prints cost centres with a count of
//! 0; ember's normalised output lists only stacks that carry weight, so 0-count
//! lines are dropped from both sides before comparing. Files whose expected output needs a non-default
//! inferno option (`--includeoffset`: flamegraph-bug.txt, dtrace-example-offsets;
//! `--bytes`/`--ticks`; `--no-modules`) are not compared, since ember runs the
//! collapsers with their defaults.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, TreeOptions};
use ember::sources::input::{Progress, Source};

fn lines(text: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let (stack, count) = l.rsplit_once(' ').expect("stack count");
        *out.entry(stack.to_string()).or_insert(0) += count.parse::<i64>().expect("integer count");
    }
    out.retain(|_, v| *v != 0);
    out
}

fn ember_folded(path: &Path) -> (String, String) {
    let p = formats::load(
        &Source::Path(path.to_path_buf()),
        &LoadOptions::default(),
        &Progress::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let tree = CallTree::build(&p, TreeOptions::default());
    let mut out = Vec::new();
    ember::output::folded(&mut out, &p, &tree).expect("write");
    (p.format.clone(), String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn inferno_collapser_formats_match_infernos_expected_output() {
    let Some(corpus) = common::corpus("inferno collapser conformance") else {
        return;
    };
    let cases: &[(&str, &str, &str)] = &[
        (
            "dtrace",
            "other/dtrace/example-dtrace-stacks.txt",
            "other/dtrace/results/dtrace-example.txt",
        ),
        (
            "dtrace",
            "other/dtrace/hex-addresses.txt",
            "other/dtrace/results/hex-addresses.txt",
        ),
        (
            "dtrace",
            "other/dtrace/java.txt",
            "other/dtrace/results/java.txt",
        ),
        (
            "dtrace",
            "other/dtrace/rust-names.txt",
            "other/dtrace/results/rust-names.txt",
        ),
        (
            "dtrace",
            "other/dtrace/scope_with_no_argument_list.txt",
            "other/dtrace/results/scope_with_no_argument_list.txt",
        ),
        (
            "dtrace",
            "other/dtrace/stack-ustack.txt",
            "other/dtrace/results/stack-ustack.txt",
        ),
        (
            "macos-sample",
            "other/macos-sample/sample.txt",
            "other/macos-sample/results/sample-default.txt",
        ),
        (
            "ghcprof",
            "other/ghc-prof/percent.prof",
            "other/ghc-prof/results/percent.txt",
        ),
        (
            "ghcprof",
            "other/ghc-prof/ticks.prof",
            "other/ghc-prof/results/ticks.txt",
        ),
        (
            "ghcprof",
            "other/ghc-prof/utf8.prof",
            "other/ghc-prof/results/utf8.txt",
        ),
    ];
    let mut failures = Vec::new();
    let mut pass: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (fmt, input, expected) in cases {
        let entry = pass.entry(fmt).or_default();
        entry.1 += 1;
        let (format, got) = ember_folded(&corpus.join(input));
        let want = std::fs::read_to_string(corpus.join(expected)).expect("oracle");
        if format != *fmt {
            failures.push(format!("{input}: detected as {format}, expected {fmt}"));
        } else if lines(&got) != lines(&want) {
            failures.push(format!("{input}: folded output differs from {expected}"));
        } else {
            entry.0 += 1;
        }
    }
    for (fmt, (ok, all)) in &pass {
        eprintln!("{fmt}: {ok}/{all} pass");
    }
    // A report longer than the detection head is still recognised by its header.
    let (format, _) = ember_folded(&corpus.join("other/macos-sample/large.txt.gz"));
    assert_eq!(format, "macos-sample (gzip)");
    // Inputs that are not these formats, or hold no stacks, give clean errors.
    for bad in [
        "other/dtrace/only-header-lines.txt",
        "other/ghc-prof/speedscope-simple.prof",
    ] {
        let r = formats::load(
            &Source::Path(corpus.join(bad)),
            &LoadOptions::default(),
            &Progress::new(),
        );
        assert!(r.is_err(), "{bad} should not load");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

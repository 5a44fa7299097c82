//! Exports (`ember convert --to folded|svg|speedscope|pprof`, the viewer's export
//! key): what ember writes, ember and the peer tools read back to the same
//! numbers; a zoomed or time-cut export holds just that part.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use ember::model::{CallTree, NodeId, Profile, TreeOptions};
use ember::output::export::{self, ExportFormat, Scope};

use common::{folded_lines, load_bytes, load_path, repo};

fn sample(name: &str) -> PathBuf {
    repo().join("samples").join(name)
}

fn tree_of(p: &Profile, value: usize) -> CallTree {
    CallTree::build(
        p,
        TreeOptions {
            value,
            ..TreeOptions::default()
        },
    )
}

fn scope<'a>(p: &'a Profile, tree: &'a CallTree, root: NodeId) -> Scope<'a> {
    Scope {
        profile: p,
        tree,
        root,
        title: "test".into(),
        notes: vec!["focus: main".into()],
        icicle: false,
    }
}

/// What an export writes.
fn exported(format: ExportFormat, scope: &Scope) -> Vec<u8> {
    let mut bytes = Vec::new();
    export::write(&mut bytes, format, scope).unwrap_or_else(|e| panic!("{format:?}: {e}"));
    bytes
}

/// Exports `p` (its default value's tree, all of it) and loads the file back.
fn round_trip(p: &Profile, format: ExportFormat) -> Profile {
    let tree = tree_of(p, p.default_value);
    let bytes = exported(format, &scope(p, &tree, NodeId::ROOT));
    let input = common::write_input(&format!("out.{}", format.extension()), &bytes);
    load_path(&input.path).unwrap_or_else(|e| panic!("reading back the {format:?}: {e}"))
}

/// Each stack's self weight in the value's real unit (nanoseconds for times),
/// so a fractional seconds profile and its whole-nanosecond pprof compare.
fn real_lines(p: &Profile, value: usize) -> Vec<(String, f64)> {
    let tree = tree_of(p, value);
    let vt = &p.value_types[value];
    let per = vt.unit.nanos().unwrap_or(1.0) / vt.scale();
    let mut out: Vec<(String, f64)> = common::all_nodes(&tree)
        .into_iter()
        .filter(|&n| tree.self_weight(n) != 0)
        .map(|n| {
            let path = common::stack_text(p, &tree, n);
            (path, tree.self_weight(n) as f64 * per)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Same stacks, same weights in every value type; `kinds`: and the same names
/// of the value types (speedscope has none).
fn assert_same_numbers(a: &Profile, b: &Profile, what: &str, kinds: bool) {
    assert_eq!(
        a.value_types.len(),
        b.value_types.len(),
        "{what}: value types"
    );
    for v in 0..a.value_types.len() {
        if kinds {
            assert_eq!(
                a.value_types[v].kind, b.value_types[v].kind,
                "{what}: kind {v}"
            );
        }
        let (x, y) = (real_lines(a, v), real_lines(b, v));
        assert_eq!(x.len(), y.len(), "{what}: stacks of value {v}");
        for ((px, vx), (py, vy)) in x.iter().zip(&y) {
            assert_eq!(px, py, "{what}: value {v}");
            assert!((vx - vy).abs() <= 0.5, "{what}: {px}: {vx} vs {vy}");
        }
    }
}

const SAMPLES: [&str; 6] = [
    "go-loganalytics.pb.gz",
    "go-loganalytics.heap.pb.gz",
    "perf-python-wordindex.folded",
    "perf-python-wordindex-small.perf.gz",
    "node-inventory-sync.cpuprofile",
    "pyspy-orders-report.speedscope.json",
];

#[test]
fn pprof_export_reads_back_to_the_same_numbers_in_every_value_type() {
    for name in SAMPLES {
        let p = load_path(&sample(name)).unwrap();
        let back = round_trip(&p, ExportFormat::Pprof);
        assert_same_numbers(&p, &back, name, true);
        assert_eq!(back.default_value, p.default_value, "{name}: shown value");
        assert_eq!(
            back.meta.duration_ns, p.meta.duration_ns,
            "{name}: duration"
        );
        assert_eq!(
            back.meta.period.as_ref().map(|x| x.0),
            p.meta.period.as_ref().map(|x| x.0),
            "{name}: period"
        );
    }
}

#[test]
fn folded_export_reads_back_to_the_same_lines() {
    for name in SAMPLES {
        let p = load_path(&sample(name)).unwrap();
        let tree = tree_of(&p, p.default_value);
        let back = round_trip(&p, ExportFormat::Folded);
        let back_tree = tree_of(&back, 0);
        let want: Vec<String> = folded_lines(&p, &tree)
            .into_iter()
            .filter(|l| !l.starts_with("<no frames>"))
            .collect();
        assert_eq!(folded_lines(&back, &back_tree), want, "{name}");
    }
}

#[test]
fn speedscope_export_of_one_value_type_reads_back_to_the_same_numbers() {
    for name in [
        "perf-python-wordindex.folded",
        "pyspy-orders-report.speedscope.json",
    ] {
        let p = load_path(&sample(name)).unwrap();
        assert_eq!(p.value_types.len(), 1, "{name}");
        let back = round_trip(&p, ExportFormat::Speedscope);
        assert_eq!(back.format, "speedscope", "{name}");
        assert_same_numbers(&p, &back, name, false);
    }
}

/// The file against speedscope's schema (file-format-schema.json): the keys it
/// requires, frame indexes in range, one weight per sample, endValue the sum.
#[test]
fn speedscope_export_follows_the_schema_with_a_profile_per_value_type() {
    let p = load_path(&sample("go-loganalytics.heap.pb.gz")).unwrap();
    let tree = tree_of(&p, p.default_value);
    let bytes = exported(ExportFormat::Speedscope, &scope(&p, &tree, NodeId::ROOT));
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        doc["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames = doc["shared"]["frames"].as_array().unwrap();
    assert!(frames.iter().all(|f| f["name"].is_string()));
    let profiles = doc["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), p.value_types.len());
    assert_eq!(doc["activeProfileIndex"], p.default_value);
    for (v, prof) in profiles.iter().enumerate() {
        assert_eq!(prof["type"], "sampled");
        let unit = prof["unit"].as_str().unwrap();
        let want = if p.value_types[v].unit == ember::model::Unit::Bytes {
            "bytes"
        } else {
            "none"
        };
        assert_eq!(unit, want, "profile {v}");
        let samples = prof["samples"].as_array().unwrap();
        let weights = prof["weights"].as_array().unwrap();
        assert_eq!(samples.len(), weights.len());
        assert!(samples.iter().all(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .all(|i| (i.as_u64().unwrap() as usize) < frames.len())
        }));
        let sum: i64 = weights.iter().map(|w| w.as_i64().unwrap()).sum();
        assert_eq!(sum, p.total(v), "profile {v}: weights sum to the total");
        assert_eq!(prof["endValue"].as_i64().unwrap(), sum);
        assert_eq!(prof["startValue"], 0);
    }
}

const TREE: &[u8] = b"main;parse;lex 30\nmain;parse 10\nmain;render;paint 50\nother;x 7\n";

fn node(p: &Profile, tree: &CallTree, path: &[&str]) -> NodeId {
    let ids: Vec<_> = path
        .iter()
        .map(|n| p.frames.get(n.as_bytes()).unwrap())
        .collect();
    let (n, found) = tree.find_path(p, &ids);
    assert_eq!(found, path.len());
    n
}

#[test]
fn a_zoomed_export_holds_the_zoomed_frame_below_its_ancestors() {
    let p = load_bytes(TREE);
    let tree = tree_of(&p, 0);
    let parse = node(&p, &tree, &["main", "parse"]);
    for format in [
        ExportFormat::Folded,
        ExportFormat::Pprof,
        ExportFormat::Speedscope,
    ] {
        let bytes = exported(format, &scope(&p, &tree, parse));
        let input = common::write_input(&format!("z.{}", format.extension()), &bytes);
        let back = load_path(&input.path).unwrap();
        let t = tree_of(&back, 0);
        assert_eq!(
            folded_lines(&back, &t),
            ["main;parse 10", "main;parse;lex 30"],
            "{format:?}"
        );
    }
}

#[test]
fn an_export_of_a_time_range_holds_only_its_samples() {
    let p = load_path(&sample("perf-python-wordindex-small.perf.gz")).unwrap();
    let n = p.samples.len();
    let tree = CallTree::build(
        &p,
        TreeOptions {
            value: p.default_value,
            samples: Some(n / 4..n / 2),
            ..TreeOptions::default()
        },
    );
    let bytes = exported(ExportFormat::Pprof, &scope(&p, &tree, NodeId::ROOT));
    let input = common::write_input("range.pb.gz", &bytes);
    let back = load_path(&input.path).unwrap();
    let t = tree_of(&back, back.default_value);
    assert_eq!(t.total(NodeId::ROOT), tree.total(NodeId::ROOT));
    assert!(tree.total(NodeId::ROOT) < p.total(p.default_value));
    assert_eq!(folded_lines(&back, &t), folded_lines(&p, &tree));
}

#[test]
fn svg_export_names_the_total_in_its_unit_and_escapes_names() {
    let p = load_bytes(b"main;\x1b[2Jevil<b>&;leaf 30\nmain;other 70\n");
    let tree = tree_of(&p, 0);
    let bytes = exported(ExportFormat::Svg, &scope(&p, &tree, NodeId::ROOT));
    let svg = String::from_utf8(bytes).unwrap();
    assert!(svg.starts_with("<?xml"), "{}", &svg[..80]);
    assert!(svg.contains("all (100 samples, 100%)"), "the root's title");
    assert!(svg.contains("other (70 samples, 70.00%)"));
    assert!(!svg.contains('\x1b'), "control characters never pass");
    assert!(
        svg.contains("\\x1b[2Jevil&lt;b&gt;&amp;"),
        "escaped for XML"
    );
    assert!(svg.contains("focus: main"), "the notes are the subtitle");
}

#[test]
fn svg_export_of_nanoseconds_counts_in_milliseconds() {
    let p = load_path(&sample("go-loganalytics.pb.gz")).unwrap();
    let tree = tree_of(&p, p.default_value);
    let bytes = exported(ExportFormat::Svg, &scope(&p, &tree, NodeId::ROOT));
    let svg = String::from_utf8(bytes).unwrap();
    let total_ms = tree.total(NodeId::ROOT) / 1_000_000;
    let want = format!("all ({} ms, 100%)", group(total_ms));
    assert!(svg.contains(&want), "no {want:?}");
}

fn group(n: i64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn an_empty_view_is_refused_with_a_reason() {
    let p = load_bytes(b"main;a 5\n");
    let tree = CallTree::build(
        &p,
        TreeOptions {
            samples: Some(0..0),
            ..TreeOptions::default()
        },
    );
    let err = export::write(
        &mut Vec::new(),
        ExportFormat::Svg,
        &scope(&p, &tree, NodeId::ROOT),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no samples"), "{err}");
}

#[test]
fn a_two_count_profile_exports_both_sides() {
    let p = load_bytes(b"main;a 3 5\nmain;b 4 0\n");
    let tree = tree_of(&p, p.default_value);
    let bytes = exported(ExportFormat::Folded, &scope(&p, &tree, NodeId::ROOT));
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "main;a 3 5\nmain;b 4 0\n"
    );
    let svg = exported(ExportFormat::Svg, &scope(&p, &tree, NodeId::ROOT));
    let svg = String::from_utf8(svg).unwrap();
    // inferno's differential titles: the after count and the change of the
    // frame's own samples, as a share of after's total (+2 of 5).
    assert!(svg.contains("<title>a (5 samples, 100.00%; +40.00%)</title>"));
}

// --- the command line -------------------------------------------------------

fn ember(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .env("EMBER_NO_SUPERVISOR", "1")
        .output()
        .unwrap()
}

#[test]
fn convert_takes_the_format_from_the_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("perf-python-wordindex.folded");
    for (name, magic) in [
        ("out.svg", &b"<?xml"[..]),
        ("out.json", &b"{\"$schema\""[..]),
        ("out.pb.gz", &[0x1f, 0x8b][..]),
        ("out.folded", &b"python3.11;"[..]),
    ] {
        let out = dir.path().join(name);
        let o = ember(&[
            "convert",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(magic), "{name}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files left");
}

#[test]
fn convert_to_an_unwritable_place_fails_naming_it_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no-such-dir/out.svg");
    let input = sample("perf-python-wordindex.folded");
    let o = ember(&[
        "convert",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no-such-dir/out.svg"), "{err}");
    assert!(!out.exists());
}

#[test]
fn convert_never_writes_over_its_input() {
    let input = common::write_input("in.folded", b"main;a 3\n");
    let path = input.path.to_str().unwrap();
    let o = ember(&["convert", path, "--to", "svg", "-o", path]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to overwrite"));
    assert_eq!(std::fs::read(&input.path).unwrap(), b"main;a 3\n");
}

/// The oracle: `go tool pprof -top` of ember's pprof export of
/// samples/go-loganalytics.pb.gz, kept as a fixture (tests/fixtures/README.md
/// says how it was made), so the check runs where Go is not installed. Every
/// row's flat and cum equal ember's self and total of the same export.
#[test]
fn go_tool_pprof_reads_the_pprof_export_to_embers_numbers() {
    let oracle = repo().join("tests/fixtures/export/go-loganalytics.ember-pprof-top.txt");
    let text = std::fs::read_to_string(&oracle).unwrap();
    let p = load_path(&sample("go-loganalytics.pb.gz")).unwrap();
    let back = round_trip(&p, ExportFormat::Pprof);
    check_pprof_top(&back, &text);
    // And today's Go, where it is installed (not on CI's machine).
    let tree = tree_of(&p, p.default_value);
    let bytes = exported(ExportFormat::Pprof, &scope(&p, &tree, NodeId::ROOT));
    let input = common::write_input("go.pb.gz", &bytes);
    match go_pprof_top(&input.path) {
        Some(out) => check_pprof_top(&back, &out),
        None => eprintln!("go not installed: checked against the fixture only"),
    }
}

fn go_pprof_top(path: &Path) -> Option<String> {
    let o = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-top",
            "-nodecount=100000",
            "-nodefraction=0",
        ])
        .args(["-edgefraction=0", "-unit=ns"])
        .arg(path)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn check_pprof_top(p: &Profile, text: &str) {
    let tree = tree_of(p, p.default_value);
    let table = common::top_table(p, &tree);
    let ns = |s: &str| -> i64 {
        if s == "0" {
            0
        } else {
            s.strip_suffix("ns")
                .expect("-unit=ns")
                .parse()
                .expect("a number")
        }
    };
    let mut rows = 0;
    let mut in_rows = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Duration: ") {
            let total = rest.split("Total samples = ").nth(1).unwrap();
            assert_eq!(
                ns(total.split(' ').next().unwrap()),
                tree.total(NodeId::ROOT)
            );
        }
        if line.trim_start().starts_with("flat ") {
            in_rows = true;
            continue;
        }
        if !in_rows || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        let name = line.rsplit_once("%  ").map(|(_, n)| n).expect("a name");
        // pprof marks functions the input inlined; ember's rows are the functions.
        let name = name
            .strip_suffix(" (inline)")
            .or_else(|| name.strip_suffix(" (partial-inline)"))
            .unwrap_or(name);
        let row = table
            .rows
            .iter()
            .find(|r| p.frames.name(r.frame) == name)
            .unwrap_or_else(|| panic!("ember has no row for {name}"));
        assert_eq!(row.self_weight, ns(cols[0]), "{name}: flat");
        assert_eq!(row.total, ns(cols[3]), "{name}: cum");
        rows += 1;
    }
    assert_eq!(
        rows,
        table.rows.len(),
        "pprof lists every function ember does"
    );
}

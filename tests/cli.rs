//! The `ember` binary's non-interactive commands, run as a user would run them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use ember::output::value_text;

fn ember() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ember"));
    c.stdin(Stdio::null()).env_remove("RUST_BACKTRACE");
    c
}

fn run(args: &[&str]) -> Output {
    ember().args(args).output().expect("running ember")
}

fn run_path(args: &[&str], path: &Path) -> Output {
    ember()
        .args(args)
        .arg(path)
        .output()
        .expect("running ember")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture(name: &str) -> std::path::PathBuf {
    common::repo().join("tests/fixtures").join(name)
}

/// A text row split into (self, self%, total, total%, name); the name is what
/// follows the two blanks after the fourth column, spaces and all.
fn parse_row(line: &str) -> (String, String, String, String, String) {
    let mut rest = line;
    let mut cols = Vec::new();
    for _ in 0..4 {
        rest = rest.trim_start_matches(' ');
        let end = rest.find(' ').expect("a column");
        cols.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    let name = rest.strip_prefix("  ").expect("two blanks before the name");
    (
        cols[0].clone(),
        cols[1].clone(),
        cols[2].clone(),
        cols[3].clone(),
        name.to_string(),
    )
}

#[test]
fn top_prints_a_header_and_rows_by_self_weight() {
    let o = run_path(&["top"], &fixture("shared-callees.folded"));
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = "\
total: 23 samples in 8 functions
   self   self%   total  total%  name
      9  39.13%       9  39.13%  malloc
      6  26.09%       6  26.09%  memcpy
      6  26.09%      11  47.83%  parse_json
      2   8.70%       7  30.43%  background
      0   0.00%      23 100.00%  app
      0   0.00%       5  21.74%  compact
      0   0.00%      16  69.57%  handle_request
      0   0.00%       5  21.74%  render
";
    assert_eq!(stdout(&o), expected);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}

#[test]
fn top_sorts_by_total_when_asked() {
    let o = run_path(
        &["top", "--sort", "total"],
        &fixture("shared-callees.folded"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let names: Vec<String> = out.lines().skip(2).map(|l| parse_row(l).4).collect();
    assert_eq!(
        names,
        [
            "app",
            "handle_request",
            "parse_json",
            "malloc",
            "background",
            "memcpy",
            "compact",
            "render"
        ]
    );
}

#[test]
fn top_orders_a_real_profile_by_the_sort_column() {
    let file = common::repo().join("samples/pyspy-orders-report.folded");
    for (sort, col) in [("self", 0), ("total", 2)] {
        let o = run_path(&["top", "--sort", sort], &file);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.starts_with("total: 1243 samples in "), "{out}");
        let values: Vec<i64> = out
            .lines()
            .skip(2)
            .map(|l| {
                let r = parse_row(l);
                let v = if col == 0 { r.0 } else { r.2 };
                v.parse().expect("an integer")
            })
            .collect();
        assert!(values.len() > 50);
        assert!(
            values.windows(2).all(|w| w[0] >= w[1]),
            "{sort}: {values:?}"
        );
    }
}

#[test]
fn top_limit_prints_only_the_first_rows() {
    let o = run_path(&["top", "--limit", "2"], &fixture("shared-callees.folded"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], "total: 23 samples in 8 functions");
    assert_eq!(parse_row(lines[2]).4, "malloc");
    assert_eq!(parse_row(lines[3]).4, "memcpy");
    let o = run_path(&["top", "--limit", "0"], &fixture("shared-callees.folded"));
    assert_eq!(stdout(&o).lines().count(), 2);
}

fn json_of(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("top --format json prints JSON")
}

/// `ember top --format json` must agree with the library's `TopTable`.
fn check_json_against_library(file: &Path) {
    let doc = json_of(&run_path(&["top", "--format", "json"], file));
    let p = common::load_path(file).expect("loads");
    let tree = common::default_tree(&p);
    let table = common::top_table(&p, &tree);
    let vt = &p.value_types[tree.options.value];
    assert_eq!(doc["unit"], "samples");
    let num = |v: &serde_json::Value| v.as_f64().expect("a number");
    let lib = |v: i64| value_text(v, vt).parse::<f64>().expect("a number");
    assert_eq!(num(&doc["total"]), lib(table.total), "{}", file.display());
    let functions = doc["functions"].as_array().expect("functions is an array");
    assert_eq!(functions.len(), table.rows.len(), "{}", file.display());
    for (f, r) in functions.iter().zip(&table.rows) {
        let obj = f.as_object().expect("an object");
        assert_eq!(obj.len(), 3, "{f}");
        assert_eq!(f["name"], common::frame_name(&p, r.frame), "{f}");
        assert_eq!(num(&f["self"]), lib(r.self_weight), "{f}");
        assert_eq!(num(&f["total"]), lib(r.total), "{f}");
    }
}

#[test]
fn top_json_has_every_function_with_the_library_numbers() {
    check_json_against_library(&fixture("shared-callees.folded"));
    check_json_against_library(&fixture("recursion.folded"));
    check_json_against_library(&common::repo().join("samples/pyspy-orders-report.folded"));
    check_json_against_library(&common::repo().join("samples/perf-python-wordindex.folded"));
}

#[test]
fn top_json_prints_fractional_values_as_numbers() {
    let doc = json_of(&run_path(
        &["top", "--format", "json"],
        &fixture("mixed.folded"),
    ));
    assert_eq!(doc["total"].as_f64(), Some(5.5));
    let functions = doc["functions"].as_array().expect("functions");
    let c = functions
        .iter()
        .find(|f| f["name"] == "c")
        .expect("function c");
    assert_eq!(c["self"].as_f64(), Some(1.75));
}

#[test]
fn top_json_limit_cuts_the_list() {
    let doc = json_of(&run_path(
        &["top", "--format", "json", "--limit", "2"],
        &fixture("shared-callees.folded"),
    ));
    let names: Vec<&str> = doc["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| f["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["malloc", "memcpy"]);
    assert_eq!(doc["total"].as_i64(), Some(23));
}

#[test]
fn top_escapes_control_characters_in_text_but_not_in_json() {
    let input = common::write_input("evil.folded", b"main;evil\x1b[2J 2\nmain;ok 1\n");
    let o = run_path(&["top"], &input.path);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!o.stdout.contains(&0x1b), "raw ESC in the text output");
    assert!(stdout(&o).contains(r"evil\x1b[2J"), "{}", stdout(&o));
    let doc = json_of(&run_path(&["top", "--format", "json"], &input.path));
    assert_eq!(doc["functions"][0]["name"], "evil\u{1b}[2J");
}

fn assert_fails_naming(o: &Output, name: &str) {
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(o));
    let err = stderr(o);
    assert!(err.contains(name), "stderr does not name {name}: {err}");
    assert!(err.starts_with("ember: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn fails_with_exit_1_naming_a_missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = run_path(&["top"], &dir.path().join("nope.folded"));
    assert_fails_naming(&o, "nope.folded");
}

#[test]
fn fails_with_exit_1_naming_an_empty_file() {
    let input = common::write_input("empty.folded", b"");
    let o = run_path(&["top"], &input.path);
    assert_fails_naming(&o, "empty.folded");
    assert!(stderr(&o).contains("empty"), "{}", stderr(&o));
}

#[test]
fn fails_with_exit_1_naming_a_garbage_file() {
    let mut bytes = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    bytes.extend((0u32..8192).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let input = common::write_input("garbage.bin", &bytes);
    let o = run_path(&["top"], &input.path);
    assert_fails_naming(&o, "garbage.bin");
}

#[test]
fn fails_with_exit_1_on_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = run_path(&["top"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn fails_with_exit_2_on_a_bad_flag() {
    let f = fixture("depths.folded");
    let f = f.to_str().expect("a UTF-8 path");
    for args in [
        &["top", "--bogus", f][..],
        &["top", "--sort", "nope", f],
        &["top", "--limit", "x", f],
        &["top", "--format", "xml", f],
        &["top"],
        &["--no-such-flag"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "{args:?}: no message");
    }
}

#[test]
fn top_reads_stdin_for_a_dash() {
    let mut child = ember()
        .args(["top", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"a;b 1\na;c 2\nd 3\n")
            .expect("write stdin");
    }
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("total: 6 samples in 4 functions\n"),
        "{out}"
    );
    assert_eq!(parse_row(out.lines().nth(2).expect("a row")).4, "d");
}

#[test]
fn top_reads_gzip_from_stdin() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"a;b 1\na;c 2\n").expect("gzip");
    let bytes = gz.finish().expect("gzip");
    let mut child = ember()
        .args(["top", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&bytes)
        .expect("write stdin");
    let doc = json_of(&child.wait_with_output().expect("wait"));
    assert_eq!(doc["total"].as_i64(), Some(3));
}

#[test]
fn top_reports_bad_lines_on_stderr_and_lists_them_when_verbose() {
    let input = common::write_input("some-bad.folded", b"a 1\nnot a sample\nb 2\nalso bad\n");
    let o = run_path(&["top"], &input.path);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("some-bad.folded") && err.contains("2 warnings"),
        "{err}"
    );
    let o = run_path(&["top", "--verbose"], &input.path);
    let err = stderr(&o);
    assert!(err.contains("some-bad.folded:2:"), "{err}");
    assert!(err.contains("some-bad.folded:4:"), "{err}");
    assert!(stdout(&o).starts_with("total: 3 samples"), "{}", stdout(&o));
}

#[test]
fn top_succeeds_when_the_reader_closes_the_pipe_early() {
    // Enough output (~1 MB) that ember is still writing when the pipe closes.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!(
            "main;some_rather_long_function_name_number_{i:05}_for_output {}\n",
            i % 7 + 1
        ));
    }
    let input = common::write_input("wide.folded", text.as_bytes());
    let mut child = ember()
        .arg("top")
        .arg(&input.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("read one line");
    // The reader (and the pipe) are dropped here, like `| head -1`.
    assert!(first.starts_with("total: "), "{first}");
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "status {:?}: {}", o.status, stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}

#[test]
fn watch_dir_must_be_a_directory_and_excludes_a_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-dir");
    let o = run_path(&["--watch-dir"], &missing);
    assert_fails_naming(&o, "no-such-dir");
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    let input = common::write_input("w.folded", b"a;b 1\n");
    let o = ember()
        .arg("--watch-dir")
        .arg(dir.path())
        .arg(&input.path)
        .output()
        .expect("running ember");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn requests_the_input_cannot_honour_exit_2_and_missing_data_1() {
    let timed = common::repo().join("samples/node-inventory-sync.cpuprofile");
    let timed = timed.to_str().unwrap();
    let folded = common::repo().join("samples/perf-python-wordindex.folded");
    let folded = folded.to_str().unwrap();
    let backwards = run(&["top", timed, "--from", "4", "--until", "2"]);
    assert_eq!(backwards.status.code(), Some(2), "{}", stderr(&backwards));
    assert!(stderr(&backwards).contains("before it starts"));
    let per_second = run(&[
        "diff",
        "--norm",
        "per-second",
        "--format",
        "text",
        folded,
        folded,
    ]);
    assert_eq!(per_second.status.code(), Some(2), "{}", stderr(&per_second));
    assert!(stderr(&per_second).contains("duration"));
    let normalize = run(&["diff", "--normalize", "--format", "text", folded, folded]);
    assert_eq!(normalize.status.code(), Some(2), "{}", stderr(&normalize));
    assert!(stderr(&normalize).contains("--norm scaled"));
    // A range past the end is a fact about the data, not a usage error.
    let past = run(&["top", timed, "--from", "99999"]);
    assert_eq!(past.status.code(), Some(1), "{}", stderr(&past));
    assert!(stderr(&past).contains("holds no samples"));
}

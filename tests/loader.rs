//! The folded loader, end to end through `formats::load`: small inline inputs
//! written to a temporary directory, and golden files in `tests/fixtures/`.
//!
//! Golden files: each `tests/fixtures/NAME.folded` is loaded and its tree printed
//! as normalised folded lines (`a;b;c <self>`, non-zero self only, sorted), which
//! must equal `tests/fixtures/NAME.expected`. Run with `BLESS=1` to rewrite the
//! expected files from the current output (then review the diff).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

use common::{
    default_tree, folded_lines, folded_text, load_bytes, node, row, top_table, try_load_bytes,
    write_input,
};
use ember::error::LoadError;
use ember::model::{NodeId, Unit};
use ember::output::value_text;

fn default_total_text(p: &ember::model::Profile) -> String {
    value_text(p.total(p.default_value), &p.value_types[p.default_value])
}

#[test]
fn sums_fractional_counts_exactly() {
    let p = load_bytes(b"a;b 1.5\na;c 2.25\n");
    assert_eq!(p.value_types.len(), 1);
    assert_eq!(p.value_types[0].decimals, 2);
    assert_eq!(default_total_text(&p), "3.75");
    let tree = default_tree(&p);
    assert_eq!(folded_lines(&p, &tree), ["a;b 1.5", "a;c 2.25"]);
    assert_eq!(
        value_text(tree.total(NodeId::ROOT), &p.value_types[0]),
        "3.75"
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn widens_decimals_when_a_later_line_has_more() {
    // Integers first, then one decimal, then three: earlier values are rescaled.
    let p = load_bytes(b"a 2\nb 0.5\nc 0.125\nd 7\n");
    assert_eq!(p.value_types[0].decimals, 3);
    assert_eq!(default_total_text(&p), "9.625");
    assert_eq!(folded_text(&p), "a 2\nb 0.5\nc 0.125\nd 7\n");
}

#[test]
fn reads_crlf_line_endings_without_keeping_the_cr() {
    let p = load_bytes(b"a;b 1\r\na;c 2\r\n# comment\r\n\r\na;b 3\r\n");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(folded_text(&p), "a;b 4\na;c 2\n");
    assert!(p.frames.ids().all(|f| !p.frames.raw(f).contains(&b'\r')));
}

#[test]
fn skips_blank_and_comment_lines_without_warnings() {
    let p = load_bytes(
        b"# produced by a tool\n\n#another: header\na;b 1\n\n\n# mid comment\na;c 2\n\n",
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.samples.len(), 2);
    assert_eq!(folded_text(&p), "a;b 1\na;c 2\n");
}

#[test]
fn keeps_spaces_inside_frame_names() {
    let p = load_bytes(b"main;do some work (x) 3\nmain;<lambda> at 0x1 2\nmain;two  spaces  5\n");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        folded_text(&p),
        "main;<lambda> at 0x1 2\nmain;do some work (x) 3\nmain;two  spaces 5\n"
    );
}

#[test]
fn drops_empty_frames_and_notes_it() {
    let p = load_bytes(b"a;;b 1\n;a;c 2\n");
    assert_eq!(folded_text(&p), "a;b 1\na;c 2\n");
    assert!(
        p.notes.iter().any(|n| n.contains("2 empty frame names")),
        "notes: {:?}",
        p.notes
    );
}

/// One line of ~1 MB: `frame_number_000000;frame_number_000001;... 7`.
fn megabyte_line() -> (String, usize) {
    let mut line = String::new();
    let mut n = 0;
    while line.len() < 1 << 20 {
        if n > 0 {
            line.push(';');
        }
        line.push_str(&format!("frame_number_{n:06}"));
        n += 1;
    }
    line.push_str(" 7\n");
    (line, n)
}

fn check_megabyte_line(p: &ember::model::Profile, n: usize) {
    let tree = default_tree(p);
    assert_eq!(tree.total(NodeId::ROOT), 7);
    assert_eq!(p.frames.len(), n);
    let leaf = p.samples.stack_of(0).expect("the sample has a stack");
    assert_eq!(p.stacks.path(leaf).len(), n);
}

#[test]
fn reads_a_one_megabyte_line_as_folded() {
    let (line, n) = megabyte_line();
    check_megabyte_line(&common::load_bytes_as_folded(line.as_bytes()), n);
}

#[test]

fn detects_a_one_megabyte_line_as_folded() {
    let (line, n) = megabyte_line();
    check_megabyte_line(&load_bytes(line.as_bytes()), n);
}

#[test]
fn reads_a_line_longer_than_the_read_buffer() {
    // One 5 MiB frame name (the loader reads 4 MiB chunks), then lines that share
    // the long prefix, so prefix sharing must work across a buffer refill.
    // (Read as folded explicitly: detection fails on a first line this long.)
    let long = "x".repeat(5 << 20);
    let text = format!("{long};a 1\n{long};b 2\n{long} 3\nshort 4\n");
    let p = common::load_bytes_as_folded(text.as_bytes());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let tree = default_tree(&p);
    assert_eq!(tree.total(NodeId::ROOT), 10);
    let x = node(&p, &tree, &[long.as_str()]);
    assert_eq!(tree.total(x), 6);
    assert_eq!(tree.self_weight(x), 3);
    assert_eq!(tree.total(node(&p, &tree, &[long.as_str(), "b"])), 2);
    assert_eq!(tree.total(node(&p, &tree, &["short"])), 4);
}

#[test]
fn detects_folded_when_long_lines_follow_a_short_one() {
    let long = "y;".repeat(100_000);
    let text = format!("short 1\n{long}z 2\n");
    let p = load_bytes(text.as_bytes());
    assert_eq!(p.total(0), 3);
}

#[test]
fn shows_invalid_utf8_lossily_without_panicking() {
    let p = load_bytes(b"caf\xe9;b\xff\xfe 1\ncaf\xe9;ok 2\n\xc3\x28 3\n");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(default_total_text(&p), "6");
    assert_eq!(
        folded_text(&p),
        "caf\u{fffd};b\u{fffd}\u{fffd} 1\ncaf\u{fffd};ok 2\n\u{fffd}( 3\n"
    );
}

#[test]
fn reads_py_spy_frames_with_file_and_line() {
    let p = load_bytes(
        b"<module> (app.py:10);main (app.py:5);work (lib/w.py:42) 3\n<module> (app.py:10);main (app.py:6) 1\n",
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let tree = default_tree(&p);
    let t = top_table(&p, &tree);
    let work = row(&p, &t, "work (lib/w.py:42)").expect("work row");
    assert_eq!((work.self_weight, work.total), (3, 3));
    let module = row(&p, &t, "<module> (app.py:10)").expect("module row");
    assert_eq!((module.self_weight, module.total), (0, 4));
}

#[test]
fn reads_two_counts_as_a_differential_profile() {
    let p = load_bytes(b"a;b 10 12\na;c 5 1\n");
    assert_eq!(p.value_types.len(), 2);
    assert_eq!(p.value_types[0].kind, "before");
    assert_eq!(p.value_types[1].kind, "after");
    assert_eq!(p.default_value, 1);
    assert_eq!((p.total(0), p.total(1)), (15, 13));
    assert!(
        p.notes.iter().any(|n| n.contains("differential")),
        "notes: {:?}",
        p.notes
    );
    // The default tree shows the second count; the frame names carry no count.
    assert_eq!(folded_text(&p), "a;b 12\na;c 1\n");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn counts_bad_lines_with_their_line_numbers() {
    let p = load_bytes(b"a 1\nno count here\n# comment\nb 2\nc 12V.43\nd -3\ne 4\n");
    assert_eq!(p.warnings.count, 3);
    let lines: Vec<u64> = p.warnings.first.iter().map(|w| w.line).collect();
    assert_eq!(lines, [2, 5, 6]);
    assert_eq!(default_total_text(&p), "7");
    assert!(
        p.warnings.summary().contains("line 2, 5, 6"),
        "{}",
        p.warnings.summary()
    );
}

#[test]
fn keeps_only_the_first_warnings_but_counts_all() {
    let mut text = String::from("ok 1\n");
    for _ in 0..100 {
        text.push_str("bad\n");
    }
    let p = load_bytes(text.as_bytes());
    assert_eq!(p.warnings.count, 100);
    assert_eq!(p.warnings.first.len(), ember::model::Warnings::KEPT);
    assert_eq!(p.warnings.first[0].line, 2);
}

#[test]
fn reads_gzip_input_transparently() {
    let text = b"a;b 1\na;c 2\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).expect("gzip");
    let bytes = gz.finish().expect("gzip");
    let input = write_input("profile.folded.gz", &bytes);
    let p = common::load_path(&input.path).expect("gzip input loads");
    assert_eq!(folded_text(&p), "a;b 1\na;c 2\n");
    assert!(p.format.contains("gzip"), "format: {}", p.format);
}

#[test]
fn reports_an_empty_file_as_empty() {
    for bytes in [&b""[..], b"\n\n", b"  \r\n\t\n"] {
        let input = write_input("empty.folded", bytes);
        match common::load_path(&input.path) {
            Err(e @ LoadError::Empty { .. }) => {
                assert!(e.to_string().contains("empty.folded"), "{e}")
            }
            Err(e) => panic!("{bytes:?}: expected Empty, got {e:?}"),
            Ok(_) => panic!("{bytes:?}: expected Empty, got a profile"),
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift), avoiding a leading BOM or gzip magic.
fn garbage(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    let mut out: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    out[0] = 0x7f;
    out
}

#[test]
fn rejects_an_executable_with_an_error_naming_the_file() {
    let mut bytes = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    bytes.extend(garbage(32 * 1024, 99));
    let input = write_input("a.out", &bytes);
    let err = common::load_path(&input.path).expect_err("an executable is not a profile");
    let msg = err.to_string();
    assert!(msg.contains("a.out"), "{msg}");
    assert!(!msg.chars().any(|c| c.is_control()), "{msg:?}");
}

#[test]
fn never_panics_on_binary_garbage_and_flags_whatever_it_reads() {
    for seed in 1..=100 {
        let input = write_input("garbage.bin", &garbage(16 * 1024, seed));
        let result = std::panic::catch_unwind(|| common::load_path(&input.path));
        let Ok(result) = result else {
            panic!("seed {seed}: the loader panicked");
        };
        match result {
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("garbage.bin"), "seed {seed}: {msg}");
                assert!(!msg.chars().any(|c| c.is_control()), "seed {seed}: {msg:?}");
            }
            // See `rejects_binary_garbage_with_an_error_naming_the_file`.
            Ok(p) => assert!(p.warnings.count > 10, "seed {seed}: {:?}", p.warnings),
        }
    }
}

#[test]

fn rejects_binary_garbage_with_an_error_naming_the_file() {
    for seed in 1..=20 {
        let input = write_input("garbage.bin", &garbage(16 * 1024, seed));
        match common::load_path(&input.path) {
            Err(e) => assert!(e.to_string().contains("garbage.bin"), "seed {seed}: {e}"),
            Ok(p) => panic!("seed {seed}: garbage loaded as {} samples", p.samples.len()),
        }
    }
}

#[test]
fn rejects_a_corrupt_gzip_file_naming_it() {
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00];
    bytes.extend(garbage(4096, 7));
    let input = write_input("broken.gz", &bytes);
    let err = common::load_path(&input.path).expect_err("a corrupt gzip must not load");
    assert!(err.to_string().contains("broken.gz"), "{err}");
}

#[test]
fn reports_a_missing_file_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("does-not-exist.folded");
    let err = common::load_path(&path).expect_err("missing file");
    assert!(matches!(err, LoadError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("does-not-exist.folded"), "{err}");
}

#[test]
fn says_a_missing_files_error_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = common::load_path(&dir.path().join("gone.folded")).expect_err("missing file");
    let shown = format!("{:#}", anyhow::Error::from(err));
    let io_text = std::io::Error::from_raw_os_error(2).to_string();
    assert_eq!(shown.matches(&io_text).count(), 1, "{shown}");
}

#[test]
fn names_a_cut_gzip_file_as_truncated_gzip() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for i in 0..2000 {
        writeln!(gz, "main;work;leaf{i} {}", i + 1).unwrap();
    }
    let bytes = gz.finish().unwrap();
    let input = write_input("cut.folded.gz", &bytes[..bytes.len() / 2]);
    let err = common::load_path(&input.path).expect_err("a cut gzip must not load");
    let shown = format!("{:#}", anyhow::Error::from(err));
    assert!(shown.contains("cut.folded.gz"), "{shown}");
    assert!(shown.contains("truncated gzip"), "{shown}");
    assert_eq!(
        shown.matches("incomplete deflate stream").count(),
        1,
        "{shown}"
    );
}

#[test]
fn refuses_json_that_is_no_known_profile_by_name() {
    // A speedscope summary (a report, not a profile), pretty-printed so that
    // lines like `"totalWeight": 78278` once read as folded stacks.
    let summary = b"{\n \"tool\": \"speedscope\",\n \"profiles\": [\n  {\n   \"totalWeight\": 78278\n  }\n ]\n}\n";
    for bytes in [&summary[..], b"[\n  {\"a\": 1}\n]\n", b"{}"] {
        let err = try_load_bytes(bytes).expect_err("JSON that is no profile");
        assert!(
            matches!(err, LoadError::NotProfileJson { .. }),
            "{err:?} for {}",
            String::from_utf8_lossy(bytes)
        );
        assert!(err.to_string().contains("JSON, but not a profile"), "{err}");
    }
    // Folded stacks whose root is bracketed still read as folded.
    let p = load_bytes(b"[unknown];main;work 3\n[kernel.kallsyms];irq 1\n");
    assert_eq!(p.total(p.default_value), 4);
}

#[test]
fn reports_a_file_of_only_comments_as_having_no_samples() {
    let err = try_load_bytes(b"# just a header\n# and nothing else\n").expect_err("no samples");
    assert!(matches!(err, LoadError::Invalid { .. }), "{err:?}");
}

fn utf16(text: &str, le: bool) -> Vec<u8> {
    let mut out = if le {
        vec![0xff, 0xfe]
    } else {
        vec![0xfe, 0xff]
    };
    for u in text.encode_utf16() {
        out.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
    }
    out
}

#[test]
fn reads_utf16_le_with_a_byte_order_mark() {
    let p = load_bytes(&utf16("a;b 1\r\na;c\u{e9} 2\r\n", true));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(folded_text(&p), "a;b 1\na;c\u{e9} 2\n");
}

#[test]

fn ignores_a_utf8_byte_order_mark() {
    let p = load_bytes(b"\xef\xbb\xbfa;b 1\na;c 2\n");
    assert_eq!(folded_text(&p), "a;b 1\na;c 2\n");
}

#[test]
fn reads_utf16_be_with_a_byte_order_mark() {
    let p = load_bytes(&utf16("a;b 1\na;c 2\n", false));
    assert_eq!(folded_text(&p), "a;b 1\na;c 2\n");
}

#[test]
fn reports_samples_as_the_unit() {
    let p = load_bytes(b"a 1\n");
    assert_eq!(p.value_types[0].unit, Unit::Samples);
    assert_eq!(p.format, "folded");
}

#[test]
fn merges_the_same_stack_on_unsorted_lines() {
    let p = load_bytes(b"a;b 1\nc 1\na;b 2\na 1\na;b 3\n");
    assert_eq!(folded_text(&p), "a 1\na;b 6\nc 1\n");
    // Three distinct stacks interned: a, a;b, c.
    assert_eq!(p.stacks.len(), 3);
}

#[test]
fn does_not_share_a_frame_that_is_only_a_prefix_of_another() {
    // `ab` vs `a`: byte prefixes that are not frame prefixes must not be shared.
    let p = load_bytes(b"ab;c 1\na;c 2\nab 3\na 4\nabc;c 5\n");
    assert_eq!(folded_text(&p), "a 4\na;c 2\nab 3\nab;c 1\nabc;c 5\n");
}

#[test]

fn keeps_earlier_values_intact_when_a_count_overflows() {
    // `b 0.000001` needs 6 decimals; rescaling 10^13 to 6 decimals overflows i64,
    // so that line is rejected. Earlier lines must keep their values.
    let p = load_bytes(b"a 1\nbig 10000000000000\nb 0.000001\n");
    assert_eq!(p.warnings.count, 1);
    let tree = default_tree(&p);
    assert_eq!(folded_lines(&p, &tree), ["a 1", "big 10000000000000"]);
}

#[test]
fn matches_the_golden_files() {
    let dir = common::repo().join("tests/fixtures");
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let files = common::folded_files(&dir);
    assert!(files.len() >= 3, "expected fixtures in {}", dir.display());
    let mut failures = Vec::new();
    for file in &files {
        let p = common::load_path(file).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.warnings.is_empty(),
            "{}: {:?}",
            file.display(),
            p.warnings
        );
        let got = folded_text(&p);
        let expected_path = file.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &got).expect("writing the expected file");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with BLESS=1)", expected_path.display()));
        if got != expected {
            failures.push(format!(
                "{}:\n--- expected\n{expected}--- got\n{got}",
                file.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn folded_lines_with_an_empty_stack_are_counted() {
    // py-spy writes ` 8` for samples taken outside any Python frame.
    let p = common::load_bytes(b"main;work 3\n 8\n");
    assert_eq!(p.samples.len(), 2);
    assert_eq!(p.total(0), 11);
    let tree = common::default_tree(&p);
    let table = common::top_table(&p, &tree);
    assert_eq!(table.total, 11);
    assert_eq!(table.no_frames, 8);
}

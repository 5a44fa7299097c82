use super::*;
use crate::model::testing::folded_by;

fn load(text: &str) -> Profile {
    parse(text.as_bytes(), &Progress::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

/// `a;b;c value` lines of all values added up.
fn folded(p: &Profile) -> Vec<String> {
    folded_by(p, "<none>", false, |v| v.iter().sum())
}

const FRAMES: &str = r#""shared": {"frames": [{"name": "a"}, {"name": "b", "file": "b.js", "line": 3}, {"name": "c"}, {"name": "d"}]}"#;

#[test]
fn reads_sampled_profiles_with_their_unit() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "sampled", "name": "one", "unit": "milliseconds", "startValue": 0, "endValue": 14,
              "samples": [[0, 1, 2], [0, 1, 2], [0, 1, 3], [0, 1, 2], [0, 1]], "weights": [1, 1, 4, 3, 5.5]}}]}}"#
    ));
    assert_eq!(folded(&p), ["a;b 55", "a;b;c 50", "a;b;d 40"]);
    assert_eq!(p.value_types[0].unit, Unit::Milliseconds);
    assert_eq!(p.value_types[0].decimals, 1);
    assert_eq!(p.threads[0].name, "one");
    assert!(p.samples.time.is_none());
    assert_eq!(p.meta.duration_ns, Some(14_000_000));
    let b = p.frames.get(b"b").unwrap_or(FrameId(0));
    assert_eq!(p.frame_meta[&b].file.as_deref(), Some("b.js"));
    assert!(p.warnings.is_empty());
}

#[test]
fn reads_evented_profiles_as_intervals() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "evented", "name": "e", "unit": "microseconds", "startValue": 0, "endValue": 14,
              "events": [{{"type": "O", "frame": 0, "at": 0}}, {{"type": "O", "frame": 1, "at": 0}},
                {{"type": "O", "frame": 2, "at": 0}}, {{"type": "C", "frame": 2, "at": 2}},
                {{"type": "O", "frame": 3, "at": 2}}, {{"type": "C", "frame": 3, "at": 6}},
                {{"type": "C", "frame": 1, "at": 14}}, {{"type": "C", "frame": 0, "at": 14}}]}}]}}"#
    ));
    assert_eq!(folded(&p), ["a;b 8", "a;b;c 2", "a;b;d 4"]);
    assert_eq!(p.samples.time.as_deref(), Some(&[0, 2000, 6000][..]));
    assert!(p.warnings.is_empty());
}

#[test]
fn bad_events_and_indexes_warn_instead_of_failing() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "evented", "unit": "none", "startValue": 0, "endValue": 10,
              "events": [{{"type": "O", "frame": 0, "at": 0}}, {{"type": "O", "frame": 1, "at": 1}},
                {{"type": "O", "frame": 99, "at": 1}}, {{"type": "C", "frame": 0, "at": 2}},
                {{"type": "C", "frame": 3, "at": 3}}, {{"type": "O", "frame": 2, "at": 4}}]}},
              {{"type": "sampled", "unit": "none", "samples": [[0, -1], [7], [2]], "weights": [1, 1, -2]}}]}}"#
    ));
    // a;b closed by closing a at 2; c stays open until endValue.
    assert_eq!(folded(&p), ["a 1", "a;b 1", "c 6"]);
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.warnings.count, 7, "{:?}", p.warnings);
}

#[test]
fn profiles_are_threads_and_units_are_columns() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES}, "activeProfileIndex": 1,
            "profiles": [{{"type": "sampled", "unit": "bytes", "samples": [[0]], "weights": [10]}},
              {{"type": "sampled", "unit": "seconds", "samples": [[1], [1]], "weights": [1, 2]}}]}}"#
    ));
    assert_eq!(p.value_types.len(), 2);
    assert_eq!(p.default_value, 1);
    assert_eq!(p.samples.values, [10, 0, 0, 1, 0, 2]);
    assert_eq!(p.samples.thread.as_deref(), Some(&[0, 1, 1][..]));
    assert!(p.notes.iter().any(|n| n.contains("2 speedscope profiles")));
}

#[test]
fn deep_event_stacks_and_deep_json_are_handled() {
    const DEPTH: usize = 100_000;
    let mut events: Vec<String> = (0..DEPTH)
        .map(|i| format!(r#"{{"type": "O", "frame": {}, "at": {i}}}"#, i % 4))
        .collect();
    events.extend(
        (0..DEPTH)
            .rev()
            .map(|i| format!(r#"{{"type": "C", "frame": {}, "at": {DEPTH}}}"#, i % 4)),
    );
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "evented", "unit": "none", "startValue": 0, "endValue": {DEPTH}, "events": [{}]}}]}}"#,
        events.join(",")
    ));
    let last = p.samples.stack_of(p.samples.len() - 1);
    assert_eq!(last.map(|s| p.stacks.path(s).len()), Some(DEPTH));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let nested = "[".repeat(200_000);
    assert!(matches!(
        parse(nested.as_bytes(), &Progress::default()),
        Err(ParseError::Invalid { .. })
    ));
}

#[test]
fn weights_that_would_overflow_the_total_are_skipped() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "sampled", "unit": "none", "samples": [[0], [1], [2]],
              "weights": [9e18, 9e18, 1]}}]}}"#
    ));
    assert_eq!(p.samples.len(), 2);
    assert_eq!(p.warnings.count, 1, "{:?}", p.warnings);
}

#[test]
fn cancelled_loads_stop() {
    let progress = Progress::default();
    progress.cancel();
    assert!(matches!(
        parse(&b"{}"[..], &progress),
        Err(ParseError::Cancelled)
    ));
}

#[test]
fn malformed_and_truncated_json_are_errors() {
    for text in [
        "",
        "{",
        r#"{"profiles": [{"type": "sampled", "samples": [[0, 1"#,
        "{]",
    ] {
        assert!(matches!(
            parse(text.as_bytes(), &Progress::default()),
            Err(ParseError::Invalid { .. })
        ));
    }
}

#[test]
fn probe_wants_the_schema() {
    let head =
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": []}"#;
    assert_eq!(probe(head, true), Some(true));
    assert_eq!(
        probe(
            br#"{"profiles": [], "shared": {"frames": [{"name": "a"#,
            false
        ),
        None
    );
    assert_eq!(probe(br#"{"nodes": []}"#, true), Some(false));
    assert_eq!(probe(b"a;b 1\n", true), Some(false));
    assert_eq!(probe(b"\x0a\x04\x08\x01\x10\x02", true), Some(false));
}

#[test]
fn samples_with_an_empty_stack_are_counted() {
    let p = load(&format!(
        r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json", {FRAMES},
            "profiles": [{{"type": "sampled", "name": "one", "unit": "none", "startValue": 0, "endValue": 4,
              "samples": [[0, 1], [], [0]], "weights": [1, 2, 1]}}]}}"#
    ));
    assert_eq!(folded(&p), ["<none> 2", "a 1", "a;b 1"]);
    assert_eq!(p.total(0), 4);
}

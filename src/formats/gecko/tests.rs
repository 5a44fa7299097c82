use super::builder::split_location;
use super::*;
use crate::model::FrameId;
use crate::model::testing::folded_by;

fn load(text: &str) -> Profile {
    parse(text.as_bytes(), &Progress::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

/// `a;b;c value` lines of the first value, zero sums left out.
fn folded(p: &Profile) -> Vec<String> {
    folded_by(p, "<none>", true, |v| v[0])
}

const RAW: &str = r#"{"meta": {"version": 9, "startTime": 1000, "interval": 1},
      "threads": [{"name": "GeckoMain", "pid": 7, "tid": 8,
        "samples": {"schema": {"stack": 0, "time": 1}, "data": [[2, 0.5], [3, 1.5], [null, 2.0], [1, 4.0]]},
        "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0], [0, 1], [1, 2], [1, 3]]},
        "frameTable": {"schema": {"location": 0, "line": 1}, "data": [[0], [1, 3], [2], [3, null]]},
        "stringTable": ["(root)", "main (http://x/a.js:3:4)", "js::RunScript", "0x1234"]}],
      "processes": ["{\"meta\": {\"startTime\": 1001}, \"threads\": [{\"name\": \"Child\", \"samples\": {\"schema\": {\"stack\": 0, \"time\": 1}, \"data\": [[0, 1], [0, 2]]}, \"stackTable\": {\"schema\": {\"prefix\": 0, \"frame\": 1}, \"data\": [[null, 0]]}, \"frameTable\": {\"schema\": {\"location\": 0}, \"data\": [[0]]}, \"stringTable\": [\"child\"]}]}"]}"#;

#[test]
fn reads_raw_gecko_with_child_processes() {
    let p = load(RAW);
    assert_eq!(
        folded(&p),
        [
            "(root);main;0x1234 500000",
            "(root);main;js::RunScript 1000000",
            "<none> 2000000",
            "child 1000000"
        ]
    );
    let main = p.frames.get(b"main").unwrap_or(FrameId(0));
    assert_eq!(p.frame_meta[&main].file.as_deref(), Some("http://x/a.js"));
    assert_eq!(p.frame_meta[&main].line, Some(3));
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.threads[0].pid, Some(7));
    assert_eq!(p.meta.start_unix_ns, Some(1_000_000_000));
    assert_eq!(p.samples.time.as_deref().map(|t| t[0]), Some(1_000_500_000));
    assert_eq!(p.samples.time.as_deref().map(|t| t[4]), Some(1_002_000_000));
    assert_eq!(p.total(1), 6);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn reads_the_devtools_wrapper_and_processed_format() {
    let wrapped =
        format!(r#"{{"duration": 5, "profile": {RAW}, "systemHost": {{"name": "Firefox"}}}}"#);
    assert_eq!(load(&wrapped).threads.len(), 2);
    let processed = r#"{"meta": {"startTime": 0, "preprocessedProfileVersion": 50},
          "shared": {"stringArray": ["root", "f", "f.js"]},
          "threads": [{"name": "T", "samples": {"stack": [1, 1, 0], "timeDeltas": [0, 2, 3], "length": 3},
            "stackTable": {"prefix": [null, 0], "frame": [0, 1], "length": 2},
            "frameTable": {"func": [0, 1], "line": [null, 9], "length": 2},
            "funcTable": {"name": [0, 1], "fileName": [null, 2], "length": 2}}]}"#;
    let p = load(processed);
    assert_eq!(folded(&p), ["root;f 5000000"]);
    let f = p.frames.get(b"f").unwrap_or(FrameId(0));
    assert_eq!(p.frame_meta[&f].line, Some(9));
}

#[test]
fn bad_indexes_and_cycles_warn() {
    let p = load(
        r#"{"meta": {}, "threads": [{"samples": {"schema": {"stack": 0, "time": 1}, "data": [[0, 0], [9, 1], [1, 2], [2, 3]]},
            "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[1, 0], [0, 0], [7, 5]]},
            "frameTable": {"schema": {"location": 0}, "data": [[0], [44]]}, "stringTable": ["a"]}]}"#,
    );
    assert!(p.warnings.count >= 3, "{:?}", p.warnings);
}

#[test]
fn deep_stack_tables_are_walked_without_recursion() {
    const DEPTH: usize = 100_000;
    let stacks: Vec<String> = (0..DEPTH)
        .map(|i| {
            if i == 0 {
                "[null, 0]".into()
            } else {
                format!("[{}, 0]", i - 1)
            }
        })
        .collect();
    // Stacks listed leaf first, so no prefix is resolved before its stack.
    let text = format!(
        r#"{{"meta": {{}}, "threads": [{{"samples": {{"schema": {{"stack": 0, "time": 1}}, "data": [[{}, 0], [0, 1]]}},
            "stackTable": {{"schema": {{"prefix": 0, "frame": 1}}, "data": [{}]}},
            "frameTable": {{"schema": {{"location": 0}}, "data": [[0]]}}, "stringTable": ["f"]}}]}}"#,
        DEPTH - 1,
        stacks.join(",")
    );
    let p = load(&text);
    assert_eq!(
        p.samples.stack_of(0).map(|s| p.stacks.path(s).len()),
        Some(DEPTH)
    );
    let nested = "[".repeat(200_000);
    assert!(matches!(
        parse(nested.as_bytes(), &Progress::default()),
        Err(ParseError::Invalid { .. })
    ));
}

#[test]
fn splits_locations_like_speedscope() {
    assert_eq!(split_location("f (a.js:1:2)"), Some(("f", "a.js", Some(1))));
    assert_eq!(split_location("f (a.js:7)"), Some(("f", "a.js", Some(7))));
    assert_eq!(
        split_location("g/< (http://h:80/a.js:1:2)"),
        Some(("g/<", "http://h:80/a.js", Some(1)))
    );
    assert_eq!(
        split_location("x (y) (self-hosted:3:4)"),
        Some(("x (y)", "self-hosted", Some(3)))
    );
    assert_eq!(split_location("js::RunScript"), None);
    assert_eq!(split_location("(root)"), None);
}

#[test]
fn probe_wants_meta_and_threads() {
    assert_eq!(
        probe(br#"{"meta": {"version": 3}, "threads": []}"#, true),
        Some(true)
    );
    assert_eq!(
        probe(
            br#"{"label": "a", "profile": {"meta": {}, "threads": []}}"#,
            true
        ),
        Some(true)
    );
    assert_eq!(probe(br#"{"nodes": [], "meta": {}}"#, true), Some(false));
    assert_eq!(probe(br#"{"meta": {"a": "#, false), None);
    assert_eq!(probe(b"a;b 1\n", true), Some(false));
}

//! `ember list REGEX PROFILE`: per-line flat and cum beside the source.
//!
//! Against `go tool pprof -list` on the bundled Go profile, whose source is in
//! the repository (`samples/src/go-workload`): the same routines, the same
//! lines listed, the same flat and cum per line (needs `go`; skipped without it
//! unless `EMBER_REQUIRE_GO` is set). Then, on small speedscope profiles made
//! here: where the source is looked for, a missing file, a file that changed
//! since (a line past its end), CRLF and tabs, and paths that try to leave the
//! directories given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{run_ember as ember, stdout};

/// A pprof printed value in nanoseconds (`40ms`, `1.50s`, `.` is 0).
fn ns(v: &str) -> f64 {
    if v == "." || v == "0" {
        return 0.0;
    }
    for (suffix, f) in [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ] {
        if let Some(x) = v.strip_suffix(suffix) {
            return x.parse::<f64>().unwrap() * f;
        }
    }
    panic!("not a time: {v}")
}

/// pprof's routines: name -> (line -> (flat, cum) in ns), every line listed.
type Listing = BTreeMap<String, BTreeMap<u32, (f64, f64)>>;

fn pprof_list(text: &str) -> Listing {
    let mut out = Listing::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("ROUTINE ======================== ") {
            let name = rest
                .rsplit_once(" in ")
                .map_or(rest, |(n, _)| n)
                .to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        let Some(name) = &current else { continue };
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() >= 3
            && let Some(n) = cols[2]
                .split_once(':')
                .and_then(|(n, _)| n.parse::<u32>().ok())
        {
            out.get_mut(name)
                .unwrap()
                .insert(n, (ns(cols[0]), ns(cols[1])));
        }
    }
    out
}

fn ember_list(json: &str) -> Listing {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out = Listing::new();
    for r in doc["routines"].as_array().unwrap() {
        let lines = out
            .entry(r["function"].as_str().unwrap().to_string())
            .or_default();
        for l in r["lines"].as_array().unwrap() {
            if l["text"].is_null() {
                continue; // a line ember could not show with its source
            }
            lines.insert(
                l["line"].as_u64().unwrap() as u32,
                (l["flat"].as_f64().unwrap(), l["cum"].as_f64().unwrap()),
            );
        }
    }
    out
}

#[test]
fn list_equals_go_tool_pprof_list_on_the_go_sample() {
    if !common::go_available("ember list against go tool pprof") {
        return;
    }
    let repo = common::repo();
    let profile = repo.join("samples/go-loganalytics.pb.gz");
    let src = repo.join("samples/src");
    // The profile records /work/main/samples/src/...: where the clone is
    // elsewhere both tools find it by trimming that and looking under src.
    let trim = "/work/main/samples/src";
    for pattern in ["main\\.", "sortAll", "encoding/json\\.checkValid"] {
        let o = Command::new("go")
            .args(["tool", "pprof", "-symbolize=none", "-list", pattern])
            .arg(format!("-source_path={}", src.display()))
            .arg(format!("-trim_path={trim}"))
            .arg(&profile)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let want = pprof_list(&String::from_utf8_lossy(&o.stdout));
        let o = ember(&[
            "list",
            pattern,
            profile.to_str().unwrap(),
            "--source-path",
            src.to_str().unwrap(),
            "--trim-path",
            trim,
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = ember_list(&stdout(&o));
        // pprof lists only routines it found the source of; so does the comparison.
        let want: Listing = want.into_iter().filter(|(_, l)| !l.is_empty()).collect();
        assert!(!want.is_empty(), "{pattern}: pprof listed nothing");
        for (name, lines) in &want {
            let mine = got
                .get(name)
                .unwrap_or_else(|| panic!("{pattern}: ember has no routine {name}"));
            let a: Vec<&u32> = lines.keys().collect();
            let b: Vec<&u32> = mine.keys().collect();
            assert_eq!(a, b, "{pattern}: {name}: the lines listed");
            for (n, (flat, cum)) in lines {
                let (f, c) = mine[n];
                // pprof prints two decimals of its unit: within half of that.
                let close = |x: f64, y: f64| (x - y).abs() <= 0.005 * y.abs().max(1e6) + 1.0;
                assert!(
                    close(f, *flat) && close(c, *cum),
                    "{name}:{n}: pprof {flat} {cum}, ember {f} {c}"
                );
            }
        }
    }
}

/// A speedscope profile whose frames are `work` at lines 2 and 4 of `file`,
/// and `main` at line 3 of `main`.
fn profile_with(dir: &Path, main: &str, file: &str) -> std::path::PathBuf {
    let text = format!(
        r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[
        {{"name":"main","file":"{main}","line":3}},{{"name":"work","file":"{file}","line":2}},
        {{"name":"work","file":"{file}","line":4}}]}},
        "profiles":[{{"type":"sampled","name":"t","unit":"none","startValue":0,"endValue":10,
        "samples":[[0,1],[0,1],[0,2]],"weights":[1,1,1]}}]}}"#
    );
    let p = dir.join("p.speedscope.json");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_source_is_found_by_suffix_under_source_path_and_missing_files_say_where_they_were_looked_for()
 {
    let tmp = tempfile::tempdir().unwrap();
    let p = profile_with(tmp.path(), "/gone/app/main.py", "/gone/app/work.py");
    let p = p.to_str().unwrap();
    // Missing: the figures, and every place looked at.
    let o = ember(&["list", "^work$", p]);
    let out = stdout(&o);
    assert!(o.status.success());
    assert!(out.contains("         2          2       2:"), "{out}");
    assert!(
        out.contains("source not found: looked at /gone/app/work.py"),
        "{out}"
    );
    // Found under --source-path by the path's suffix; tabs and CRLF tidied.
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("app")).unwrap();
    std::fs::write(
        src.join("app/work.py"),
        "def work():\r\n\tx = 1\r\n\ty = 2\r\n\treturn x + y\r\n",
    )
    .unwrap();
    let o = ember(&["list", "^work$", p, "--source-path", src.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(
        out.contains("         2          2       2:    x = 1\n"),
        "{out}"
    );
    assert!(
        out.contains("         1          1       4:    return x + y\n"),
        "{out}"
    );
    assert!(!out.contains('\r') && !out.contains('\t'), "{out:?}");
    assert!(!out.contains("not found"), "{out}");
    // A file that changed since: line 4 is past its end.
    std::fs::write(src.join("app/work.py"), "def work():\n    x = 1\n").unwrap();
    let out = stdout(&ember(&[
        "list",
        "^work$",
        p,
        "--source-path",
        src.to_str().unwrap(),
    ]));
    assert!(out.contains("line 4 past the end of"), "{out}");
    assert!(
        out.contains("(2 lines): the file changed since the profile was taken"),
        "{out}"
    );
    // No function matches: exit 1, said.
    let o = ember(&["list", "^nothing$", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no function"),
        "{o:?}"
    );
    // A bad pattern is a usage error.
    assert_eq!(ember(&["list", "(", p]).status.code(), Some(2));
}

#[test]
fn paths_that_leave_the_source_directories_are_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("work.py"), "SECRET\nSECRET\nSECRET\nSECRET\n").unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("app")).unwrap();
    // A symlink inside the source directory that points out of it.
    std::os::unix::fs::symlink(outside.join("work.py"), src.join("app/work.py")).unwrap();
    let list = |recorded: &str| {
        let p = profile_with(tmp.path(), "/gone/app/main.py", recorded);
        let src = src.to_str().unwrap();
        stdout(&ember(&[
            "list",
            "^work$",
            p.to_str().unwrap(),
            "--source-path",
            src,
        ]))
    };
    let out = list("/gone/app/work.py");
    assert!(!out.contains("SECRET"), "{out}");
    assert!(out.contains("source not found"), "{out}");
    // A recorded path climbing out with `..` is neither read as it is nor
    // joined under the directory with its `..`.
    let climb = outside.join("../outside/work.py");
    let out = list(climb.to_str().unwrap());
    assert!(!out.contains("SECRET"), "{out}");
    assert!(out.contains("source not found"), "{out}");
}

/// perf script with `--srcline`: each line's flat and cum are the samples on
/// that `file:line`, summed by hand: `work` at work.c:12 (3 samples) and
/// work.c:14 (1), `main` at main.c:3 under all 4 and alone on none.
#[test]
fn perf_srclines_list_the_samples_per_line() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = |t: u32, work_line: u32| {
        format!(
            "prog 1 10.{t:06}: 1 cpu-clock:\n\
             \t1000 work+0x10 (/bin/prog)\n  /src/work.c:{work_line}\n\
             \t2000 main+0x5 (/bin/prog)\n  /src/main.c:3\n\n"
        )
    };
    let text: String = [(1, 12), (2, 12), (3, 14), (4, 12)]
        .iter()
        .map(|&(t, l)| sample(t, l))
        .collect();
    let perf = tmp.path().join("srcline.perf");
    std::fs::write(&perf, text).unwrap();
    let o = ember(&["list", ".", perf.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // (function, [(line, flat, cum)])
    type Lines = Vec<(u64, i64, i64)>;
    let routines: Vec<(String, Lines)> = doc["routines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let lines = r["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| {
                    (
                        l["line"].as_u64().unwrap(),
                        l["flat"].as_i64().unwrap(),
                        l["cum"].as_i64().unwrap(),
                    )
                })
                .collect();
            (r["function"].as_str().unwrap().to_string(), lines)
        })
        .collect();
    assert_eq!(
        routines,
        [
            ("main".to_string(), vec![(3, 0, 4)]),
            ("work".to_string(), vec![(12, 3, 3), (14, 1, 1)]),
        ]
    );
}

/// `ember diff BEFORE AFTER --list REGEX --norm raw`: per line, after less
/// before equals `go tool pprof -list REGEX -diff_base BEFORE AFTER` (flat and
/// cum) on the project's Go pair; each side's cum equals `ember list` of that
/// side alone; a line that grew past noise says so.
#[test]
fn diff_list_gives_each_lines_change_as_pprof_diff_base() {
    let fx = common::repo().join("tests/fixtures");
    let (before, after) = (
        fx.join("go-diff-before.pb.gz"),
        fx.join("go-diff-after.pb.gz"),
    );
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let src = fx.join("src");
    let trim = "/work/main/tests/fixtures/src";
    let o = ember(&[
        "diff",
        b,
        a,
        "--list",
        "main\\.encode$",
        "--norm",
        "raw",
        "--format",
        "json",
        "--source-path",
        src.to_str().unwrap(),
        "--trim-path",
        trim,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = &doc["routines"][0];
    assert_eq!(r["function"], "main.encode");
    let line = |n: u64| {
        r["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["line"].as_u64() == Some(n))
            .unwrap_or_else(|| panic!("line {n}: {r}"))
            .clone()
    };
    let l68 = line(68);
    assert_eq!(l68["verdict"], "significant", "{l68}");
    // Each side's cum is that side's own listing.
    for (side, file) in [(0, b), (1, a)] {
        let one = ember(&["list", "main\\.encode$", file, "--format", "json"]);
        let one: serde_json::Value = serde_json::from_str(&stdout(&one)).unwrap();
        let cum = one["routines"][0]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["line"] == 68)
            .unwrap()["cum"]
            .as_i64()
            .unwrap();
        assert_eq!(l68["cum"][side].as_i64().unwrap(), cum, "side {side}");
    }
    if !common::go_available("diff --list against go tool pprof -diff_base") {
        return;
    }
    let o = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-symbolize=none",
            "-list",
            "main\\.encode$",
        ])
        .arg(format!("-source_path={}", src.display()))
        .arg(format!("-trim_path={trim}"))
        .arg("-diff_base")
        .arg(&before)
        .arg(&after)
        .output()
        .unwrap();
    let want = pprof_list(&String::from_utf8_lossy(&o.stdout));
    let lines = &want["main.encode"];
    assert!(lines.len() > 5, "{want:?}");
    for (n, (flat, cum)) in lines {
        let l = line(u64::from(*n));
        let d = |k: &str| (l[k][1].as_i64().unwrap() - l[k][0].as_i64().unwrap()) as f64;
        let close = |x: f64, y: f64| (x - y).abs() <= 0.005 * y.abs().max(1e6) + 1.0;
        assert!(
            close(d("flat"), *flat) && close(d("cum"), *cum),
            "line {n}: pprof {flat} {cum}, ember {l}"
        );
    }
}

/// Paths of the installed toolchains: Rust's `/rustc/<commit>/library/...`
/// under the sysroot's rust-src, Go's standard library under GOROOT and a
/// module under GOMODCACHE (each pointed at a made-up root here).
#[test]
fn toolchain_sources_are_found_under_their_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let put = |rel: &str| {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "line one\nline two\nline three\nline four\n").unwrap();
    };
    put("sysroot/lib/rustlib/src/rust/library/std/src/io/mod.rs");
    put("goroot/src/fmt/print.go");
    put("modcache/github.com/acme/lib@v1.2.3/lib.go");
    for (recorded, root) in [
        (
            "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/io/mod.rs",
            "sysroot",
        ),
        ("/usr/local/go/src/fmt/print.go", "goroot"),
        (
            "/home/ci/go/pkg/mod/github.com/acme/lib@v1.2.3/lib.go",
            "modcache",
        ),
    ] {
        let p = profile_with(tmp.path(), "/gone/main.py", recorded);
        let o = Command::new(env!("CARGO_BIN_EXE_ember"))
            .args(["list", "^work$", p.to_str().unwrap()])
            .env("EMBER_NO_SUPERVISOR", "1")
            .env("EMBER_RUST_SYSROOT", tmp.path().join("sysroot"))
            .env("GOROOT", tmp.path().join("goroot"))
            .env("GOMODCACHE", tmp.path().join("modcache"))
            .output()
            .unwrap();
        let out = stdout(&o);
        assert!(
            out.contains("         2          2       2:line two"),
            "{root}: {out}"
        );
        assert!(!out.contains("not found"), "{root}: {out}");
    }
}

/// A V8 `.cpuprofile` at line granularity: a node's own samples go to the
/// lines its `positionTicks` count, so each line's flat (in samples) is the
/// sum of its ticks over the function's nodes. Checked on the bundled node
/// profile for every function whose nodes' ticks add up to their samples.
#[test]
fn node_position_ticks_give_each_line_its_samples() {
    use std::collections::HashMap;
    let path = common::repo().join("samples/node-inventory-sync.cpuprofile");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut hits: HashMap<i64, u64> = HashMap::new();
    for s in doc["samples"].as_array().unwrap() {
        *hits.entry(s.as_i64().unwrap()).or_default() += 1;
    }
    // function -> line -> ticks, and the functions with a node whose ticks
    // do not add up to its samples (left out).
    let mut want: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    let mut uneven = std::collections::BTreeSet::new();
    for n in doc["nodes"].as_array().unwrap() {
        let name = n["callFrame"]["functionName"].as_str().unwrap().to_string();
        if n["callFrame"]["url"].as_str().unwrap_or("").is_empty() {
            continue; // native code: no file, no lines
        }
        let Some(ticks) = n["positionTicks"].as_array() else {
            continue;
        };
        let sum: u64 = ticks.iter().map(|t| t["ticks"].as_u64().unwrap()).sum();
        if sum != hits.get(&n["id"].as_i64().unwrap()).copied().unwrap_or(0) {
            uneven.insert(name.clone());
        }
        for t in ticks {
            *want
                .entry(name.clone())
                .or_default()
                .entry(t["line"].as_u64().unwrap())
                .or_default() += t["ticks"].as_u64().unwrap();
        }
    }
    let checked: Vec<&String> = want
        .keys()
        .filter(|n| !n.is_empty() && !uneven.contains(*n))
        .collect();
    assert!(checked.len() >= 5, "{checked:?}");
    let o = ember(&[
        "list",
        ".",
        path.to_str().unwrap(),
        "--sample-type",
        "samples",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for name in checked {
        let mut flat: BTreeMap<u64, u64> = BTreeMap::new();
        for r in got["routines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["function"] == name.as_str())
        {
            for l in r["lines"].as_array().unwrap() {
                let f = l["flat"].as_u64().unwrap();
                if f > 0 {
                    *flat.entry(l["line"].as_u64().unwrap()).or_default() += f;
                }
            }
        }
        assert_eq!(&flat, &want[name], "{name}");
    }
}

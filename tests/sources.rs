//! `ember perf.data` (through `perf script`; a stand-in perf here, the real
//! one where it can record) and `ember URL` against a server on 127.0.0.1
//! that this test runs: no network outside the machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ember(args: &[&str], env: &[(&str, &str)]) -> (String, String, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ember"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("ember runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// A perf.data look-alike (the magic is what ember checks) and a stand-in
/// `perf` that prints `text` for `script`, or fails with `stderr`.
fn fake_perf(dir: &Path, text: &Path, fail: Option<&str>) -> (PathBuf, PathBuf) {
    let data = dir.join("perf.data");
    std::fs::write(&data, b"PERFILE2\x68\0\0\0\0\0\0\0").unwrap();
    let perf = dir.join("perf");
    let body = match fail {
        None => format!(
            "#!/bin/sh\n[ \"$1\" = script ] || exit 9\necho \"$@\" > {}/args\nzcat -f {}\n",
            dir.display(),
            text.display()
        ),
        Some(msg) => format!("#!/bin/sh\necho '{msg}' >&2\nexit 255\n"),
    };
    std::fs::write(&perf, body).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (data, perf)
}

#[test]
fn perf_data_is_read_through_perf_script() {
    let dir = tempfile::tempdir().unwrap();
    let text = root().join("samples/perf-python-wordindex-small.perf.gz");
    let (data, perf) = fake_perf(dir.path(), &text, None);
    let before = std::fs::read(&data).unwrap();
    let direct = ember(&["top", text.to_str().unwrap()], &[]);
    let through = ember(
        &["top", data.to_str().unwrap()],
        &[("EMBER_PERF", perf.to_str().unwrap())],
    );
    assert_eq!(through.2, 0, "{}", through.1);
    assert_eq!(through.0, direct.0);
    assert!(through.1.contains("perf script"), "{}", through.1);
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert!(args.starts_with("script --header -i "), "{args}");
    // Line granularity asks perf for source lines.
    ember(
        &["top", data.to_str().unwrap(), "--granularity", "line"],
        &[("EMBER_PERF", perf.to_str().unwrap())],
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert!(args.contains("-F +srcline"), "{args}");
    // The input is never written.
    assert_eq!(std::fs::read(&data).unwrap(), before);
}

#[test]
fn a_failing_perf_script_shows_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let text = root().join("samples/perf-python-wordindex-small.perf.gz");
    let (data, perf) = fake_perf(
        dir.path(),
        &text,
        Some("failed to open perf.data: Permission denied"),
    );
    let (_, err, code) = ember(
        &["top", data.to_str().unwrap()],
        &[("EMBER_PERF", perf.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("perf script` failed"), "{err}");
    assert!(err.contains("Permission denied"), "{err}");
    assert!(err.contains(data.to_str().unwrap()), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_missing_perf_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = root().join("samples/perf-python-wordindex-small.perf.gz");
    let (data, _) = fake_perf(dir.path(), &text, None);
    let missing = dir.path().join("no-such-perf");
    let (_, err, code) = ember(
        &["info", data.to_str().unwrap()],
        &[("EMBER_PERF", missing.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("apt-get install"), "{err}");
    assert!(err.contains("perf script --header -i"), "{err}");
    // check's bad input is exit 2.
    let (_, err, code) = ember(
        &["check", data.to_str().unwrap(), text.to_str().unwrap()],
        &[("EMBER_PERF", missing.to_str().unwrap())],
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_real_perf_data_where_perf_can_record() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("perf.data");
    let recorded = Command::new("perf")
        .args(["record", "-q", "-F", "499", "-g", "-o"])
        .arg(&data)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done",
        ])
        .output();
    match recorded {
        Ok(o) if o.status.success() && data.is_file() => {}
        _ => {
            eprintln!("skipped: perf is not installed or may not record here");
            return;
        }
    }
    let (out, err, code) = ember(&["top", data.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["total"].as_i64().unwrap() > 0, "{out}");
}

/// A one-connection-at-a-time HTTP server answering by path.
fn serve() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let pprof = std::fs::read(root().join("samples/go-loganalytics.pb.gz")).unwrap();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let req = String::from_utf8_lossy(&req).into_owned();
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, ctype, body): (&str, &str, Vec<u8>) = match path.as_str() {
                p if p.starts_with("/debug/pprof/profile") => {
                    std::thread::sleep(Duration::from_millis(1200));
                    ("200 OK", "application/octet-stream", pprof.clone())
                }
                "/debug/pprof/" => (
                    "200 OK",
                    "text/html; charset=utf-8",
                    b"<html><body>index</body></html>".to_vec(),
                ),
                "/debug/pprof/goroutine?debug=1" => (
                    "200 OK",
                    "text/plain; charset=utf-8",
                    b"goroutine profile: total 3\n".to_vec(),
                ),
                "/slow" => {
                    std::thread::sleep(Duration::from_secs(8));
                    ("200 OK", "application/octet-stream", pprof.clone())
                }
                "/quit" => return,
                _ => (
                    "404 Not Found",
                    "text/plain",
                    b"404 page not found\n".to_vec(),
                ),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
        }
    });
    (format!("http://{addr}"), handle)
}

#[test]
fn a_url_is_fetched_with_a_countdown_and_checked() {
    let (base, _server) = serve();
    let local = root().join("samples/go-loganalytics.pb.gz");
    let direct = ember(&["top", local.to_str().unwrap(), "--limit", "10"], &[]);
    let url = format!("{base}/debug/pprof/profile?seconds=1");
    let (out, err, code) = ember(&["top", &url, "--limit", "10"], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, direct.0);
    assert!(err.contains("the server profiles for 1 s"), "{err}");

    let (_, err, code) = ember(&["top", &format!("{base}/debug/pprof/")], &[]);
    assert_eq!(code, 1);
    assert!(err.contains("HTML page, not a profile"), "{err}");
    assert!(err.contains("/debug/pprof/heap"), "{err}");

    let (_, err, code) = ember(
        &["top", &format!("{base}/debug/pprof/goroutine?debug=1")],
        &[],
    );
    assert_eq!(code, 1);
    assert!(err.contains("debug=0"), "{err}");

    let (_, err, code) = ember(&["info", &format!("{base}/nothing")], &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("404") && err.contains("404 page not found"),
        "{err}"
    );
}

#[test]
fn a_slow_or_absent_server_is_an_error_within_the_timeout() {
    let (base, _server) = serve();
    let started = Instant::now();
    let (_, err, code) = ember(
        &["top", &format!("{base}/slow"), "--fetch-timeout", "1"],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no whole answer within 1 s"), "{err}");
    // Bounded, not timed: the server would answer after 8 s.
    assert!(
        started.elapsed() < Duration::from_secs(7),
        "{:?}",
        started.elapsed()
    );

    // A port nobody listens on.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (_, err, code) = ember(
        &["top", &format!("http://127.0.0.1:{port}/debug/pprof/heap")],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("could not fetch"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
}

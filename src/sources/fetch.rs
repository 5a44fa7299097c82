//! `ember http://HOST:PORT/debug/pprof/profile?seconds=30`: the profile is
//! fetched (ureq: redirects, chunked answers, TLS and proxies handled by a
//! well-kept client) into a private temporary file, with a countdown while
//! the server profiles and the bytes as they arrive. Every wait is bounded.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};

use super::{Prepared, Status, TICK, TempDir, human_bytes};

/// How to fetch: the whole wait allowed (`None`: the profile's own seconds
/// plus [`SLACK`], else [`DEFAULT_TIMEOUT`]).
#[derive(Clone, Debug, Default)]
pub struct FetchOptions {
    pub timeout: Option<Duration>,
}

/// Time allowed beyond the seconds the server is asked to profile for.
const SLACK: Duration = Duration::from_secs(30);
/// The wait for a URL that names no duration (`/heap`, `/goroutine`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The wait for the connection itself.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a refusal's body an error quotes.
const QUOTED: usize = 200;

/// Whether `arg` names an http(s) URL.
pub fn is_url(arg: &str) -> bool {
    let lower = arg.get(..8).unwrap_or(arg).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The `seconds=N` of a URL's query: how long the server profiles before it
/// answers.
fn profile_seconds(url: &str) -> Option<u64> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("seconds="))
        .and_then(|v| v.parse().ok())
}

/// A file name for what `url` answers: its last path segment and its host,
/// `profile from localhost:6060`, so titles and errors say where it came from.
fn file_name(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let last = path
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or("profile");
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.:".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect()
    };
    format!("{} from {}", clean(last), clean(host))
}

/// What the fetching thread reports.
enum Phase {
    /// The answer's status and content type arrived; the body is coming.
    Answered,
    /// All of it is in the file (or it failed).
    Done(Result<()>),
}

/// Fetches `url` into a temporary file, showing a countdown, then the bytes.
pub(super) fn fetch(url: &str, options: &FetchOptions) -> Result<Prepared> {
    let seconds = profile_seconds(url);
    let timeout = options
        .timeout
        .unwrap_or_else(|| seconds.map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s) + SLACK));
    let temp = TempDir::new()?;
    let path = temp.path().join(file_name(url));
    let received = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    {
        let (url, path, received) = (url.to_string(), path.clone(), received.clone());
        std::thread::spawn(move || {
            let result = get(&url, &path, timeout, &received, &tx);
            let _ = tx.send(Phase::Done(result));
        });
    }
    let started = Instant::now();
    let mut status = Status::new(&match seconds {
        Some(s) => format!(
            "fetching {url} (the server profiles for {s} s; timeout {} s)…",
            timeout.as_secs()
        ),
        None => format!("fetching {url} (timeout {} s)…", timeout.as_secs()),
    });
    let mut answered = false;
    let result = loop {
        match rx.recv_timeout(TICK) {
            Ok(Phase::Answered) => answered = true,
            Ok(Phase::Done(r)) => break r,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(anyhow!("the fetch ended without an answer"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let elapsed = started.elapsed();
        // ureq enforces the timeout; this is the belt to its braces.
        if elapsed > timeout + Duration::from_secs(5) {
            break Err(timed_out(timeout, seconds));
        }
        let left = timeout.saturating_sub(elapsed).as_secs();
        let text = if answered {
            format!(
                "{} received from {url}",
                human_bytes(received.load(Ordering::Relaxed))
            )
        } else if let Some(s) = seconds.filter(|&s| elapsed.as_secs() < s) {
            format!(
                "server profiling: {} s to go (timeout in {left} s) {url}",
                s - elapsed.as_secs()
            )
        } else {
            format!("waiting for the answer (timeout in {left} s) {url}")
        };
        status.show(&text);
    };
    status.done();
    result.map_err(|e| anyhow!("{url}: {e:#}"))?;
    Ok(Prepared { path, _temp: temp })
}

fn timed_out(timeout: Duration, seconds: Option<u64>) -> anyhow::Error {
    let asked = seconds.map_or(String::new(), |s| {
        format!(" (the server was asked to profile for {s} s)")
    });
    anyhow!(
        "no whole answer within {} s{asked}; --fetch-timeout SECS waits longer",
        timeout.as_secs()
    )
}

/// The request itself, on its own thread: the answer is checked to be a
/// profile and written to `path`.
fn get(
    url: &str,
    path: &std::path::Path,
    timeout: Duration,
    received: &AtomicU64,
    tx: &mpsc::Sender<Phase>,
) -> Result<()> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .timeout_connect(Some(CONNECT_TIMEOUT.min(timeout)))
        .http_status_as_error(false)
        .user_agent(concat!("ember/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let seconds = profile_seconds(url);
    let mut answer = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Timeout(_) => timed_out(timeout, seconds),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            timed_out(timeout, seconds)
        }
        other => anyhow!("could not fetch: {other}"),
    })?;
    let _ = tx.send(Phase::Answered);
    let code = answer.status();
    let content_type = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = answer.body_mut().as_reader();
    let mut head = Vec::new();
    (&mut body)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| read_error(e, timeout, seconds))?;
    received.store(head.len() as u64, Ordering::Relaxed);
    if !code.is_success() {
        bail!(
            "the server answered {}{}",
            code,
            quote(&head).map_or(String::new(), |q| format!(": {q}"))
        );
    }
    check_profile(url, &content_type, &head)?;
    let mut file =
        std::fs::File::create(path).map_err(|e| anyhow!("creating {}: {e}", path.display()))?;
    file.write_all(&head)?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = body
            .read(&mut buf)
            .map_err(|e| read_error(e, timeout, seconds))?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n])
            .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
        received.fetch_add(n as u64, Ordering::Relaxed);
    }
    if received.load(Ordering::Relaxed) == 0 {
        bail!("the server answered {code} with an empty body, not a profile");
    }
    Ok(())
}

fn read_error(e: std::io::Error, timeout: Duration, seconds: Option<u64>) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::TimedOut || e.to_string().contains("timeout") {
        timed_out(timeout, seconds)
    } else {
        anyhow!("reading the answer: {e}")
    }
}

/// Refuses what is plainly no profile: an HTML page (an index, a login, a
/// proxy's error) anywhere, and text where a Go server's pprof handler
/// should send a gzipped protobuf (`debug=1` and `debug=2` answer text).
fn check_profile(url: &str, content_type: &str, head: &[u8]) -> Result<()> {
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &head[i..]);
    let lower: Vec<u8> = start.iter().take(15).map(u8::to_ascii_lowercase).collect();
    let html = content_type.starts_with("text/html")
        || lower.starts_with(b"<!doctype html")
        || lower.starts_with(b"<html");
    if html {
        let hint = if url.contains("/debug/pprof") {
            "; a Go server's profiles are /debug/pprof/profile?seconds=30, /debug/pprof/heap, /debug/pprof/goroutine?debug=0"
        } else {
            ""
        };
        bail!(
            "the server answered with an HTML page, not a profile (Content-Type: {}){hint}",
            if content_type.is_empty() {
                "none"
            } else {
                content_type
            }
        );
    }
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    if url.contains("/debug/pprof/") && !gzip && content_type.starts_with("text/") {
        bail!(
            "the server answered with text ({}), not a pprof protobuf: {}; ask with debug=0",
            content_type,
            quote(head).unwrap_or_default()
        );
    }
    Ok(())
}

/// The first line of a body, made safe for a terminal and cut short.
fn quote(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut q: String = crate::host::sanitize::sanitize(line)
        .chars()
        .take(QUOTED)
        .collect();
    if line.chars().count() > QUOTED {
        q.push('…');
    }
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_urls() {
        assert!(is_url("http://localhost:6060/debug/pprof/heap"));
        assert!(is_url("HTTPS://x/y"));
        assert!(!is_url("profile.pb.gz"));
        assert!(!is_url("http"));
        assert!(!is_url("./http://x"));
    }

    #[test]
    fn reads_the_profile_seconds() {
        assert_eq!(
            profile_seconds("http://h:1/debug/pprof/profile?seconds=30"),
            Some(30)
        );
        assert_eq!(profile_seconds("http://h/p?x=1&seconds=5#f"), Some(5));
        assert_eq!(profile_seconds("http://h/debug/pprof/heap"), None);
        assert_eq!(profile_seconds("http://h/p?seconds=abc"), None);
    }

    #[test]
    fn names_the_file_after_the_url() {
        assert_eq!(
            file_name("http://localhost:6060/debug/pprof/profile?seconds=30"),
            "profile from localhost:6060"
        );
        assert_eq!(file_name("https://h/"), "profile from h");
        assert_eq!(file_name("http://h/a b/../x%2F"), "x_2F from h");
    }

    #[test]
    fn refuses_html_and_pprof_text() {
        let url = "http://h/debug/pprof/goroutine?debug=1";
        assert!(check_profile(url, "text/html; charset=utf-8", b"<p>").is_err());
        assert!(check_profile("http://h/x", "", b"\n <!DOCTYPE html><html>").is_err());
        let e = check_profile(url, "text/plain", b"goroutine profile: total 4\n");
        assert!(e.is_err_and(|e| e.to_string().contains("debug=0")));
        assert!(check_profile(url, "application/octet-stream", &[0x1f, 0x8b, 8]).is_ok());
        // Another server's folded text is for the loaders to judge.
        assert!(check_profile("http://h/folded", "text/plain", b"a;b 1\n").is_ok());
    }

    #[test]
    fn quotes_one_safe_line() {
        assert_eq!(
            quote(b"\n  404 page not found\nmore").as_deref(),
            Some("404 page not found")
        );
        let q = quote(b"bad \x1b[31mred").unwrap_or_default();
        assert!(q.starts_with("bad") && !q.contains('\x1b'), "{q:?}");
        assert_eq!(quote(b"  \n"), None);
        assert!(quote(&[b'x'; 500]).is_some_and(|q| q.ends_with('…')));
    }
}

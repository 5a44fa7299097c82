//! A small host: a memory limit or a kill never leaves the terminal broken,
//! and ember says what happened. The viewer runs in a pseudo-terminal opened
//! here, as the session leader's controlling terminal (`setsid -c`); limits
//! are set with the shell's `ulimit` (setrlimit) in the child only.

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::termios::Termios;

fn ember() -> &'static str {
    env!("CARGO_BIN_EXE_ember")
}

/// A folded profile of `lines` distinct stacks (about 60 bytes each).
fn profile(dir: &Path, lines: usize) -> PathBuf {
    let path = dir.join("big.folded");
    let mut text = String::with_capacity(lines * 64);
    for i in 0..lines {
        text.push_str(&format!(
            "main;serve_{};handle_{};parse_{};leaf_{} {}\n",
            i % 7,
            i % 101,
            i % 1009,
            i,
            1 + i % 3
        ));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

struct Pty {
    master: std::fs::File,
    slave: std::fs::File,
}

/// A pseudo-terminal of 80x24, or None where the machine has none to give
/// (no /dev/ptmx in a minimal container).
fn open_pty() -> Option<Pty> {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let Ok(master) = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY) else {
        eprintln!("skipped: no pseudo-terminal (/dev/ptmx) on this machine");
        return None;
    };
    grantpt(&master).unwrap_or_else(|e| panic!("{e}"));
    unlockpt(&master).unwrap_or_else(|e| panic!("{e}"));
    let name = ptsname(&master, Vec::new()).unwrap_or_else(|e| panic!("{e}"));
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_string_lossy().as_ref())
        .unwrap_or_else(|e| panic!("{e}"));
    rustix::termios::tcsetwinsize(
        &slave,
        rustix::termios::Winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Some(Pty {
        master: std::fs::File::from(master),
        slave,
    })
}

/// The modes a shell relies on: input, output, control and local flags and
/// the special characters.
fn modes(t: &Termios) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        t.input_modes, t.output_modes, t.control_modes, t.local_modes, t.special_codes
    )
}

/// Everything the terminal was sent, collected on a thread until it hangs up.
fn collect(master: &std::fs::File) -> Arc<Mutex<Vec<u8>>> {
    let out = Arc::new(Mutex::new(Vec::new()));
    let mut m = master.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let sink = Arc::clone(&out);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1 << 16];
        while let Ok(n) = m.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut o) = sink.lock() {
                o.extend_from_slice(&buf[..n]);
            }
        }
    });
    out
}

fn text(out: &Arc<Mutex<Vec<u8>>>) -> String {
    out.lock()
        .map(|o| String::from_utf8_lossy(&o).into_owned())
        .unwrap_or_default()
}

fn wait_for(out: &Arc<Mutex<Vec<u8>>>, what: &str, secs: u64) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if text(out).contains(what) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Starts `sh -c script` as a session leader on the pty (its controlling
/// terminal), with `$EMBER` and `$PROFILE` set.
fn start(pty: &Pty, script: &str, profile: &Path) -> std::process::Child {
    let io = || Stdio::from(pty.slave.try_clone().unwrap_or_else(|e| panic!("{e}")));
    Command::new("setsid")
        .args(["-c", "sh", "-c", script])
        .env("EMBER", ember())
        .env("PROFILE", profile)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("EMBER_NO_SUPERVISOR")
        .stdin(io())
        .stdout(io())
        .stderr(io())
        .spawn()
        .unwrap_or_else(|e| panic!("setsid: {e}"))
}

/// The smallest `ulimit -v` (KiB, in steps of 4 MiB) under which ember
/// starts and reads a one-line profile: the limits below sit just above it,
/// so the test holds whatever the binary's own size and threads need.
fn baseline_kib(dir: &Path) -> u64 {
    let tiny = dir.join("tiny.folded");
    std::fs::write(&tiny, "main;work 1\n").unwrap_or_else(|e| panic!("{e}"));
    (4..=256u64)
        .map(|k| k * 4096)
        .find(|kib| {
            Command::new("sh")
                .args([
                    "-c",
                    &format!("ulimit -v {kib} && exec \"$EMBER\" info \"$PROFILE\""),
                ])
                .env("EMBER", ember())
                .env("PROFILE", &tiny)
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .unwrap_or_else(|| panic!("ember never started under 1 GiB"))
}

/// Waits at most `secs` for `child`, killing it after that.
fn wait_at_most(child: &mut std::process::Child, secs: u64) -> std::process::ExitStatus {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn have_setsid() -> bool {
    Command::new("setsid")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The resets the supervising parent writes after an abnormal end.
fn assert_reset_after(out: &str, from: usize) {
    let tail = &out[from.min(out.len())..];
    for seq in ["\x1b[?1000l", "\x1b[?1006l", "\x1b[?1049l", "\x1b[?25h"] {
        assert!(
            tail.contains(seq),
            "{seq:?} not sent after the end: {tail:?}"
        );
    }
}

/// The pid of `parent`'s one child process.
fn child_of(parent: u32) -> Option<i32> {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        let list = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(pid) = list.split_whitespace().next().and_then(|p| p.parse().ok()) {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn a_viewer_killed_with_sigkill_leaves_the_pty_as_it_was_and_says_so() {
    if !have_setsid() {
        eprintln!("skipped: no setsid(1) to give the viewer a controlling terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = profile(dir.path(), 2_000);
    let Some(pty) = open_pty() else {
        return;
    };
    let before = rustix::termios::tcgetattr(pty.slave.as_fd()).unwrap_or_else(|e| panic!("{e}"));
    let out = collect(&pty.master);
    // exec: the shell becomes ember's supervising parent, the viewer its child.
    let mut parent = start(&pty, "exec \"$EMBER\" --no-watch \"$PROFILE\"", &file);
    assert!(
        wait_for(&out, "\x1b[?1049h", 20) && wait_for(&out, "all", 20),
        "no first frame: {:?}",
        text(&out)
    );
    let during = rustix::termios::tcgetattr(pty.slave.as_fd()).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(modes(&during), modes(&before), "the viewer is in raw mode");
    let seen = text(&out).len();
    let viewer = child_of(parent.id()).unwrap_or_else(|| panic!("no viewer child"));
    let pid = rustix::process::Pid::from_raw(viewer).unwrap_or_else(|| panic!("pid {viewer}"));
    rustix::process::kill_process(pid, rustix::process::Signal::KILL)
        .unwrap_or_else(|e| panic!("{e}"));
    let status = wait_at_most(&mut parent, 20);
    assert_eq!(
        status.code(),
        Some(128 + 9),
        "the shell's convention for SIGKILL"
    );
    assert!(wait_for(&out, "SIGKILL", 5), "{:?}", text(&out));
    let after = rustix::termios::tcgetattr(pty.slave.as_fd()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(modes(&after), modes(&before), "the line discipline is back");
    let all = text(&out);
    assert_reset_after(&all, seen);
    assert!(all.contains("ember was killed"), "{all:?}");
}

#[test]
fn a_viewer_out_of_memory_restores_the_pty_and_names_the_limit() {
    if !have_setsid() {
        eprintln!("skipped: no setsid(1) to give the viewer a controlling terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Roughly 30 MB of folded text with 400k distinct stacks: far more than
    // 8 MiB above what ember needs to start.
    let limit = baseline_kib(dir.path()) + 8192;
    let file = profile(dir.path(), 400_000);
    let Some(pty) = open_pty() else {
        return;
    };
    let before = rustix::termios::tcgetattr(pty.slave.as_fd()).unwrap_or_else(|e| panic!("{e}"));
    let out = collect(&pty.master);
    let mut parent = start(
        &pty,
        &format!("ulimit -v {limit} && exec \"$EMBER\" --no-watch --force-load \"$PROFILE\""),
        &file,
    );
    let status = wait_at_most(&mut parent, 60);
    assert!(wait_for(&out, "limit", 5), "{:?}", text(&out));
    let all = text(&out);
    assert_eq!(status.code(), Some(1), "{all:?}");
    assert!(all.contains("ember ran out of memory loading"), "{all:?}");
    assert!(all.contains("from ulimit -v"), "{all:?}");
    assert!(
        !all.contains("memory allocation of"),
        "no bare abort: {all:?}"
    );
    let after = rustix::termios::tcgetattr(pty.slave.as_fd()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(modes(&after), modes(&before));
    if all.contains("\x1b[?1049h") {
        assert_reset_after(&all, all.find("\x1b[?1049h").unwrap_or(0));
    }
}

#[test]
fn a_batch_command_out_of_memory_exits_1_with_the_message() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let limit = baseline_kib(dir.path()) + 8192;
    let file = profile(dir.path(), 400_000);
    // `--sample-type` makes `top` load the profile (it would sum it while
    // reading otherwise, in far less memory).
    for cmd in ["top --sample-type samples", "info", "convert"] {
        let o = Command::new("sh")
            .args([
                "-c",
                &format!("ulimit -v {limit} && exec \"$EMBER\" $CMD --force-load \"$PROFILE\""),
            ])
            .env("EMBER", ember())
            .env("CMD", cmd)
            .env("PROFILE", &file)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("ember ran out of memory loading") && err.contains("big.folded"),
            "{cmd}: {err}"
        );
        assert!(
            err.contains("limit ") && err.contains("from ulimit -v"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn info_says_what_loading_took_and_the_limit_that_applies() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = profile(dir.path(), 2_000);
    let o = Command::new("sh")
        .args([
            "-c",
            "ulimit -v 4000000 && exec \"$EMBER\" info \"$PROFILE\"",
        ])
        .env("EMBER", ember())
        .env("PROFILE", &file)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("memory:"))
        .unwrap_or_else(|| panic!("no memory line: {out}"));
    // 4,000,000 KiB is 3906 MiB, i.e. 3.8 GiB.
    assert!(line.contains("MiB at peak to load"), "{line}");
    assert!(line.contains("MiB for the load"), "{line}");
    assert!(line.contains("limit 3.8 GiB from ulimit -v"), "{line}");
}

#[test]
fn a_load_that_will_not_fit_is_refused_before_it_starts_and_force_load_goes_ahead() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let limit = baseline_kib(dir.path()) + 8192;
    // 400k distinct stacks: about 60 MiB estimated, far over 8 MiB of room.
    let file = profile(dir.path(), 400_000);
    let run = |args: &str, file: &Path| {
        Command::new("sh")
            .args([
                "-c",
                &format!("ulimit -v {limit} && exec \"$EMBER\" {args} \"$PROFILE\""),
            ])
            .env("EMBER", ember())
            .env("PROFILE", file)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    for (args, code) in [
        ("info", 1),
        ("top --sample-type samples", 1),
        ("convert", 1),
        ("lint", 2),
        ("", 1),
    ] {
        let o = run(args, &file);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args}: {err}");
        assert!(
            err.contains("ember: loading ")
                && err.contains("big.folded (")
                && err.contains("of folded, about 4"),
            "{args}: {err}"
        );
        assert!(
            err.contains("left under ulimit -v") && err.contains("--force-load"),
            "{args}: {err}"
        );
        assert!(
            !err.contains("ran out of memory"),
            "refused before loading: {args}: {err}"
        );
        // The lean path is offered wherever it is not the command itself.
        assert_eq!(
            err.contains("or: `ember top ") && err.contains("sums folded stacks as it reads"),
            !args.starts_with("top"),
            "{args}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args}");
    }
    // A small profile under the same limit is not refused, and --force-load
    // on a load that fits changes nothing.
    let few = dir.path().join("few.folded");
    std::fs::write(&few, "main;work;leaf 1\n".repeat(1000)).unwrap_or_else(|e| panic!("{e}"));
    let o = run("info --force-load", &few);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("info", &few);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A folded profile of `lines` distinct deep stacks drawn from 48 names.
fn deep_profile(dir: &Path, lines: usize) -> PathBuf {
    let path = dir.join("deep.folded");
    let mut text = String::with_capacity(lines * 96);
    for i in 0..lines {
        let frames: Vec<String> = (0..12)
            .map(|d| format!("f{}", (i >> d) % 4 + 4 * d))
            .collect();
        text.push_str(&format!("{} {}\n", frames.join(";"), 1 + i % 5));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn top_sums_a_folded_file_while_reading_under_a_limit_its_load_would_not_fit() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let limit = baseline_kib(dir.path()) + 8192;
    let file = deep_profile(dir.path(), 300_000);
    let run = |args: &str, limited: bool| {
        let ulimit = if limited {
            format!("ulimit -v {limit} && ")
        } else {
            String::new()
        };
        Command::new("sh")
            .args([
                "-c",
                &format!("{ulimit}exec \"$EMBER\" top {args} \"$PROFILE\""),
            ])
            .env("EMBER", ember())
            .env("PROFILE", &file)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // The loaded profile's table, with room to spare.
    let loaded = run("--sample-type samples", false);
    assert!(loaded.status.success());
    let head = String::from_utf8_lossy(&loaded.stdout);
    assert!(head.starts_with("total: "), "{head}");
    // Under the limit the load is refused, and the tally still gives its table.
    let refused = run("--sample-type samples", true);
    assert_eq!(refused.status.code(), Some(1));
    for args in ["", "--format json"] {
        let streamed = run(args, true);
        assert!(
            streamed.status.success(),
            "{args}: {}",
            String::from_utf8_lossy(&streamed.stderr)
        );
        let want = run(&format!("{args} --sample-type samples"), false);
        assert_eq!(
            String::from_utf8_lossy(&streamed.stdout),
            String::from_utf8_lossy(&want.stdout),
            "{args}"
        );
    }
}

//! The supervising parent: the viewer runs as a child of a small ember process
//! that owns the terminal's state and puts it back when the child dies in a
//! way no handler sees (SIGKILL from the OOM killer, SIGSEGV, an abort, an
//! allocation failure), then says what happened on the normal screen.
//!
//! Why a parent and not more handlers: SIGKILL cannot be caught, and after a
//! failed allocation or a segfault the child can no longer be trusted to run
//! its own restore. The parent saves the termios of `/dev/tty` before the
//! child starts, forwards SIGTERM, SIGHUP, SIGINT and SIGQUIT to it (the child
//! turns them into a clean quit), and after an abnormal end restores the
//! termios and writes the resets: mouse reporting off, the normal screen, the
//! cursor shown. A normal exit passes the child's code through untouched. The
//! cost is one exec of the same binary before the first frame; the parent
//! holds no profile (figures in BENCHMARKS.md).

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};

use crate::host::limits::{Limits, TRY};

/// Set in the child's environment: it is the supervised viewer.
pub const ENV: &str = "EMBER_SUPERVISED";

/// What the parent writes after an abnormal end: every mouse mode off, the
/// normal screen, the cursor shown, attributes reset.
pub const RESET: &str =
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1049l\x1b[?25h\x1b[0m";

/// Runs the viewer as a supervised child and returns its exit code, or `None`
/// when this process should run the viewer itself: it is the child, or there
/// is no terminal to guard, or `EMBER_NO_SUPERVISOR` is set, or the child
/// cannot be started.
pub fn run(doing: &str) -> Option<ExitCode> {
    if std::env::var_os(ENV).is_some() {
        crate::host::alloc::set_supervised(true);
        return None;
    }
    if std::env::var_os("EMBER_NO_SUPERVISOR").is_some() {
        return None;
    }
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let saved = rustix::termios::tcgetattr(&tty).ok()?;
    let exe = std::env::current_exe().ok()?;
    let oom_before = crate::host::limits::oom_kills();
    // Handlers first, so a signal between spawn and forwarding is not lost on
    // a parent that would otherwise die of it.
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT]).ok()?;
    let mut child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(ENV, "1")
        .spawn()
        .ok()?;
    let pid = rustix::process::Pid::from_raw(child.id() as i32);
    let handle = signals.handle();
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if let (Some(pid), Some(sig)) = (pid, rustix::process::Signal::from_named_raw(sig)) {
                let _ = rustix::process::kill_process(pid, sig);
            }
        }
    });
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Some(ExitCode::from(1)),
        }
    };
    handle.close();
    if let Some(code) = status.code()
        && code != crate::host::alloc::OOM_EXIT
    {
        return Some(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    // An abnormal end: the terminal first, then the word.
    let _ = rustix::termios::tcsetattr(&tty, rustix::termios::OptionalActions::Now, &saved);
    let mut t = &tty;
    let _ = t.write_all(RESET.as_bytes());
    let _ = t.flush();
    let oom_killed =
        oom_before.is_some_and(|b| crate::host::limits::oom_kills().is_some_and(|a| a > b));
    let (text, code) = match status.signal() {
        None => (crate::host::limits::message().to_string(), 1),
        Some(sig) => (ended_by(sig, doing, oom_killed, &Limits::read()), 128 + sig),
    };
    eprint!("{text}");
    Some(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// What to say when the viewer died of signal `sig`.
pub fn ended_by(sig: i32, doing: &str, oom_killed: bool, limits: &Limits) -> String {
    use signal_hook::consts::*;
    let name = signal_name(sig);
    let limits = limits.describe();
    match sig {
        SIGKILL if oom_killed => format!(
            "ember was killed by the kernel's OOM killer ({name}) {doing} ({limits}); \
             the terminal was restored\n  {TRY}\n"
        ),
        SIGKILL => format!(
            "ember was killed ({name}, likely the OOM killer) {doing} ({limits}); \
             the terminal was restored\n  {TRY}\n"
        ),
        SIGSEGV | SIGBUS | SIGILL | SIGFPE | SIGABRT => format!(
            "ember crashed ({name}) {doing}; the terminal was restored. This is a bug: \
             please report it with the command line and the profile's format \
             (`ember info FILE`)\n"
        ),
        _ => format!("ember was stopped by {name} {doing}; the terminal was restored\n"),
    }
}

/// `SIGKILL`, or `signal 42`.
fn signal_name(sig: i32) -> String {
    use signal_hook::consts::*;
    let known = [
        (SIGKILL, "SIGKILL"),
        (SIGSEGV, "SIGSEGV"),
        (SIGBUS, "SIGBUS"),
        (SIGILL, "SIGILL"),
        (SIGFPE, "SIGFPE"),
        (SIGABRT, "SIGABRT"),
        (SIGTERM, "SIGTERM"),
        (SIGHUP, "SIGHUP"),
        (SIGINT, "SIGINT"),
        (SIGQUIT, "SIGQUIT"),
        (SIGPIPE, "SIGPIPE"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| format!("signal {sig}"), |(_, s)| (*s).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_gets_its_own_words() {
        use signal_hook::consts::*;
        let limits = Limits {
            limits: vec![crate::host::limits::Limit {
                bytes: 512 << 20,
                source: "cgroup memory.max",
            }],
            available: None,
        };
        let oom = ended_by(SIGKILL, "loading big.folded", true, &limits);
        assert!(oom.starts_with("ember was killed by the kernel's OOM killer (SIGKILL) loading big.folded (limit 512 MiB from cgroup memory.max)"), "{oom}");
        assert!(oom.contains("a higher limit"), "{oom}");
        let kill = ended_by(SIGKILL, "loading x", false, &limits);
        assert!(kill.contains("(SIGKILL, likely the OOM killer)"), "{kill}");
        assert!(ended_by(SIGSEGV, "loading x", false, &limits).contains("crashed (SIGSEGV)"));
        assert!(ended_by(40, "loading x", false, &limits).contains("signal 40"));
    }
}

//! The processes a capture runs, each in its own process group so a signal
//! reaches the whole tree (perf and its workload, `sh -c` and what it starts)
//! and so the terminal's Ctrl-C reaches only ember, which decides the order.
//!
//! [`Children`] is a guard: when it is dropped (every exit path, errors and
//! panics included) each group still alive gets SIGTERM, then SIGKILL, and
//! every leader is reaped.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

use super::manifest::{CommandRecord, CommandRole, Exit};

/// How a child's stdout and stderr are connected.
pub(crate) struct Output {
    /// `None`: a pipe, for [`Children::take_stdout`].
    pub stdout: Option<PathBuf>,
    /// `None`: ember's own stderr (the loggers' complaints reach the user).
    pub stderr: Option<PathBuf>,
}

pub(crate) struct Running {
    pub role: CommandRole,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    child: Child,
    pgid: Option<Pid>,
    pub status: Option<ExitStatus>,
}

impl Running {
    /// The manifest's view of it.
    pub fn record(&self) -> CommandRecord {
        CommandRecord {
            role: self.role,
            argv: self.argv.clone(),
            env: self.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            builtin: false,
            pid: Some(self.child.id()),
            pgid: self.pgid.map(|p| p.as_raw_pid().unsigned_abs()),
            exit: self.status.map(exit_of),
            error: None,
        }
    }

    /// Reaps it if it has ended; true when it has.
    pub fn poll(&mut self) -> bool {
        if self.status.is_none()
            && let Ok(Some(s)) = self.child.try_wait()
        {
            self.status = Some(s);
        }
        self.status.is_some()
    }

    /// Signals its group (members may outlive the leader: perf's workload).
    pub fn signal(&self, sig: Signal) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, sig);
        }
    }

    fn group_alive(&self) -> bool {
        self.pgid
            .is_some_and(|p| test_kill_process_group(p).is_ok())
    }

    /// Waits up to `grace` for the leader to end and the group to empty.
    fn wait(&mut self, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            if self.poll() && !self.group_alive() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Sends `sig` and waits `grace`; then SIGKILL. Always reaps the leader.
    pub fn stop(&mut self, sig: Signal, grace: Duration) {
        if self.poll() && !self.group_alive() {
            return;
        }
        self.signal(sig);
        if !self.wait(grace) {
            self.signal(Signal::KILL);
            if self.status.is_none() {
                let _ = self.child.kill();
                if let Ok(s) = self.child.wait() {
                    self.status = Some(s);
                }
            }
            self.wait(Duration::from_secs(1));
        }
    }
}

fn exit_of(s: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    Exit {
        code: s.code(),
        signal: s.signal(),
    }
}

/// The exit code a shell would give for `s`: its code, or 128 + the signal.
pub(crate) fn shell_code(s: ExitStatus) -> i32 {
    let e = exit_of(s);
    e.code.or(e.signal.map(|n| 128 + n)).unwrap_or(1)
}

/// Every process a capture started.
#[derive(Default)]
pub(crate) struct Children {
    pub list: Vec<Running>,
}

impl Children {
    /// Starts `argv` in a new process group with `env` added, stdin closed.
    /// Returns its index.
    pub fn spawn(
        &mut self,
        role: CommandRole,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        out: &Output,
    ) -> Result<usize> {
        let (program, args) = argv.split_first().context("an empty command")?;
        let stdout = match &out.stdout {
            Some(p) => Stdio::from(
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            ),
            None => Stdio::piped(),
        };
        let stderr = match &out.stderr {
            Some(p) => Stdio::from(
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            ),
            None => Stdio::inherit(),
        };
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", argv.join(" ")))?;
        let pgid = Pid::from_child(&child);
        self.list.push(Running {
            role,
            argv,
            env,
            child,
            pgid: Some(pgid),
            status: None,
        });
        Ok(self.list.len() - 1)
    }

    /// The piped stdout of child `i` (once).
    pub fn take_stdout(&mut self, i: usize) -> Option<std::process::ChildStdout> {
        self.list.get_mut(i)?.child.stdout.take()
    }

    /// Stops every child still running: SIGTERM, a short grace, SIGKILL.
    pub fn stop_all(&mut self, grace: Duration) {
        for c in &self.list {
            if c.status.is_none() || c.group_alive() {
                c.signal(Signal::TERM);
            }
        }
        for c in &mut self.list {
            c.stop(Signal::TERM, grace);
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.stop_all(Duration::from_millis(500));
    }
}

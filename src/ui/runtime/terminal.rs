//! Terminal setup and the promise that it is restored on every exit: quit, error,
//! panic (hook) and signals (the event loop turns SIGTERM/SIGHUP/SIGINT into a quit).

use std::io::{self, Write};
use std::sync::Mutex;

use crossterm::event::DisableMouseCapture;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{Command, cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Term = Terminal<CrosstermBackend<io::Stdout>>;

/// Click, drag and wheel reports in SGR form, without crossterm's any-motion mode
/// (?1003), which floods a slow link with a report per cell the pointer crosses.
struct EnableClickCapture;

impl Command for EnableClickCapture {
    fn write_ansi(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        f.write_str("\x1b[?1000h\x1b[?1002h\x1b[?1006h")
    }
}

/// Puts the terminal back as the shell expects it. Safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let mut out = io::stdout();
    let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
}

/// A panic on a worker thread, kept for the UI to report after restoring.
static WORKER_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The message of the last worker-thread panic, if any.
pub fn take_worker_panic() -> Option<String> {
    WORKER_PANIC.lock().ok().and_then(|mut g| g.take())
}

/// Installs a panic hook: a panic on the UI thread restores the terminal before the
/// message is printed; a panic elsewhere is recorded for the UI to report.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            restore();
            previous(info);
        } else if let Ok(mut slot) = WORKER_PANIC.lock() {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            *slot = Some(format!("{msg}{place}"));
        }
    }));
}

/// Owns the terminal while the UI runs; dropping it restores the terminal.
pub struct Guard {
    pub terminal: Term,
}

impl Guard {
    pub fn enter(mouse: bool) -> io::Result<Guard> {
        // crossterm would turn every colour into a reset under NO_COLOR, and with it
        // the reverse-video selection; ember honours NO_COLOR through its theme.
        crossterm::style::force_color_output(true);
        enable_raw_mode()?;
        let mut out = io::stdout();
        let entered = execute!(out, EnterAlternateScreen, cursor::Hide).and_then(|()| {
            if mouse {
                execute!(out, EnableClickCapture)
            } else {
                Ok(())
            }
        });
        if let Err(e) = entered {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(Guard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

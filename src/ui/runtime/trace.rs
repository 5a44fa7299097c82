//! `EMBER_TRACE=FILE`: a line per key, per message and per frame flushed,
//! with milliseconds since start, for measuring what a key costs from inside
//! (a tmux capture adds its own 10-17 ms; a job's end shows no change
//! ttff.sh can wait for). Off unless the variable is set; never the input.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::ui::app::prompt::same_file;

pub struct Trace {
    start: Instant,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl Trace {
    /// The trace the environment asks for: none when `EMBER_TRACE` is unset,
    /// names one of `inputs` (or a file in a watched directory) or a file that
    /// cannot be created.
    pub fn from_env(inputs: &[PathBuf]) -> Trace {
        Trace::to(std::env::var_os("EMBER_TRACE").map(PathBuf::from), inputs)
    }

    fn to(path: Option<PathBuf>, inputs: &[PathBuf]) -> Trace {
        let out = path
            .filter(|p| !inputs.iter().any(|i| same_file(i, p)))
            .and_then(|p| std::fs::File::create(p).ok())
            .map(std::io::BufWriter::new);
        Trace {
            start: Instant::now(),
            out,
        }
    }

    pub fn on(&self) -> bool {
        self.out.is_some()
    }

    /// One line: the time, then `what`.
    pub fn line(&mut self, what: std::fmt::Arguments<'_>) {
        if let Some(out) = &mut self.out {
            let ms = self.start.elapsed().as_secs_f64() * 1e3;
            let _ = writeln!(out, "{ms:.3} {what}");
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_never_writes_an_input() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let input = dir.path().join("p.folded");
        std::fs::write(&input, "a;b 1\n")?;
        let mut t = Trace::to(Some(input.clone()), std::slice::from_ref(&input));
        assert!(!t.on());
        t.line(format_args!("x"));
        assert_eq!(std::fs::read_to_string(&input)?, "a;b 1\n");

        let out = dir.path().join("trace.txt");
        let mut t = Trace::to(Some(out.clone()), &[input]);
        assert!(t.on());
        t.line(format_args!("msg loaded"));
        let text = std::fs::read_to_string(&out)?;
        let (ms, what) = text.trim_end().split_once(' ').unwrap_or_default();
        assert!(ms.parse::<f64>().is_ok(), "{text}");
        assert_eq!(what, "msg loaded");
        Ok(())
    }
}

//! Errors the library returns. Each names the file, and where it can, the format
//! that was guessed and where reading broke.

use std::io;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LoadError {
    /// The io error is in the message, not a chained source: `{:#}` would
    /// print it twice.
    #[error("{path}: {error}")]
    Io { path: String, error: io::Error },
    #[error("{path}: the input is empty")]
    Empty { path: String },
    #[error("{path}: not a profile format ember knows (tried: {tried}); it starts with \"{head}\"")]
    Unrecognised {
        path: String,
        tried: String,
        head: String,
    },
    /// JSON that none of the JSON readers takes (a summary, a config, a report).
    #[error(
        "{path}: JSON, but not a profile ember knows (it reads speedscope, cpuprofile, chrome-trace and gecko JSON); it starts with \"{head}\""
    )]
    NotProfileJson { path: String, head: String },
    /// A host-context log given where a profile was expected.
    #[error(
        "{path}: {kind} output, not a profile; open a profile with it: ember PROFILE --context {path}"
    )]
    ContextLog { path: String, kind: &'static str },
    #[error("{path}: read as {format}: {error}")]
    Read {
        path: String,
        format: &'static str,
        error: io::Error,
    },
    #[error("{path}: read as {format}: {}{message}", at_line(*line))]
    Invalid {
        path: String,
        format: &'static str,
        line: u64,
        message: String,
    },
    #[error("loading was cancelled")]
    Cancelled,
}

/// A request the inputs cannot honour as given (a backwards range, a
/// normalisation a format has no data for): the command exits 2, like a
/// command-line error.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct Usage(pub String);

impl LoadError {
    /// The io error behind an open or read failure (it is in the message, not
    /// a chained source).
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            LoadError::Io { error, .. } | LoadError::Read { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// "line 12: ", or nothing when the problem has no line (binary formats, whole-file checks).
fn at_line(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}

//! Errors the library returns. Each names the file, and where it can, the format
//! that was guessed and where reading broke.

use std::io;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path}: the input is empty")]
    Empty { path: String },
    #[error("{path}: not a profile format ember knows (tried: {tried}); it starts with \"{head}\"")]
    Unrecognised {
        path: String,
        tried: String,
        head: String,
    },
    /// A host-context log given where a profile was expected.
    #[error(
        "{path}: {kind} output, not a profile; open a profile with it: ember PROFILE --context {path}"
    )]
    ContextLog { path: String, kind: &'static str },
    #[error("{path}: read as {format}: {source}")]
    Read {
        path: String,
        format: &'static str,
        #[source]
        source: io::Error,
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

/// "line 12: ", or nothing when the problem has no line (binary formats, whole-file checks).
fn at_line(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}

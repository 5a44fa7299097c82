//! Host context: what vmstat, iostat, sar, mpstat and dool logs captured next
//! to a profile said about the host, read into one time-series model
//! ([`ContextSource`]) that the timeline, the flags and `ember info` use.
//!
//! Detected by content like the profile formats. A line that cannot be read
//! is a counted warning with its line number; a file that is none of these
//! formats is one error naming it.

mod model;

use std::path::Path;

pub use model::{
    Clock, ContextKind, ContextSource, ContextWarning, Entity, Interval, Metric, Series, Unit,
};

/// Why a context file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a format ember reads as host context.
    #[error("{path}: not a host-context log ember reads ({reason})")]
    Unknown { path: String, reason: String },
    /// Detected as `kind` but unusable (no report could be read).
    #[error("{path}: read as {kind}, line {line}: {message}")]
    Invalid {
        path: String,
        kind: &'static str,
        line: u32,
        message: String,
    },
}

/// Reads the context file at `path` (gzip or not). Never writes to it.
pub fn load(path: &Path) -> Result<ContextSource, ContextError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ContextError::Io {
        path: name.clone(),
        source,
    })?;
    parse(&bytes, &name)
}

/// Reads a context log held in memory; `name` is used in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<ContextSource, ContextError> {
    let _ = bytes;
    Err(ContextError::Unknown {
        path: name.to_string(),
        reason: "no context readers yet".to_string(),
    })
}

//! Formats read through inferno's collapsers: DTrace, macOS `sample`, Intel VTune,
//! Visual Studio, GHC `.prof` and Apple `xctrace` exports. inferno turns them into
//! folded stacks; our folded reader takes it from there. These inputs are small
//! enough (tools write them per capture) that holding the text once is fine.

use std::io::{Cursor, Read};

use inferno::collapse::Collapse;

use super::{ParseError, folded};
use crate::model::Profile;
use crate::sources::input::Progress;

/// One of inferno's input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dtrace,
    Sample,
    Vtune,
    Vsprof,
    Ghcprof,
    Xctrace,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Dtrace => "dtrace",
            Kind::Sample => "macos-sample",
            Kind::Vtune => "vtune",
            Kind::Vsprof => "vsprof",
            Kind::Ghcprof => "ghcprof",
            Kind::Xctrace => "xctrace",
        }
    }

    fn folder(self) -> Box<dyn Folder> {
        use inferno::collapse as c;
        match self {
            Kind::Dtrace => Box::new(c::dtrace::Folder::default()),
            Kind::Sample => Box::new(c::sample::Folder::default()),
            Kind::Vtune => Box::new(c::vtune::Folder::default()),
            Kind::Vsprof => Box::new(c::vsprof::Folder::default()),
            Kind::Ghcprof => Box::new(c::ghcprof::Folder::default()),
            Kind::Xctrace => Box::new(c::xctrace::Folder::default()),
        }
    }
}

/// inferno's `Collapse` is generic; this is the object-safe slice of it we use.
trait Folder {
    fn applicable(&mut self, head: &str) -> Option<bool>;
    fn fold(&mut self, input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()>;
}

impl<T: Collapse> Folder for T {
    fn applicable(&mut self, head: &str) -> Option<bool> {
        self.is_applicable(head)
    }

    fn fold(&mut self, input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        self.collapse(Cursor::new(input), out)
    }
}

/// inferno's own probe, over complete lines of the head only. A probe that panics
/// on odd input counts as "not this format".
pub fn probe(kind: Kind, head: &[u8], complete: bool) -> Option<bool> {
    let end = if complete {
        head.len()
    } else {
        head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
    };
    let text = String::from_utf8_lossy(&head[..end]);
    if text.trim().is_empty() {
        return None;
    }
    let verdict =
        std::panic::catch_unwind(|| kind.folder().applicable(&text)).unwrap_or(Some(false));
    // inferno's sample probe wants the end of the call graph too, which a long
    // report has far beyond the head; its header alone is proof enough.
    if verdict.is_none()
        && kind == Kind::Sample
        && text.starts_with("Analysis of sampling ")
        && text.contains("\nCall graph:")
    {
        return Some(true);
    }
    verdict
}

/// Collapses the whole input with inferno, then reads the folded result.
pub fn parse(
    kind: Kind,
    mut reader: impl Read,
    progress: &Progress,
) -> Result<Profile, ParseError> {
    let mut input = Vec::new();
    reader.read_to_end(&mut input).map_err(ParseError::Io)?;
    if progress.is_cancelled() {
        return Err(ParseError::Cancelled);
    }
    let mut folded_text = Vec::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        kind.folder().fold(&input, &mut folded_text)
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(ParseError::Invalid {
                line: 0,
                message: format!("inferno's {} collapser failed: {e}", kind.name()),
            });
        }
        Err(_) => {
            return Err(ParseError::Invalid {
                line: 0,
                message: format!("inferno's {} collapser crashed on this input", kind.name()),
            });
        }
    }
    drop(input);
    if folded_text.iter().all(u8::is_ascii_whitespace) {
        return Err(ParseError::Invalid {
            line: 0,
            message: format!("inferno's {} collapser found no stacks", kind.name()),
        });
    }
    let mut profile = folded::parse(&folded_text[..], progress)?;
    profile.format = kind.name().to_string();
    profile
        .notes
        .push(format!("read through inferno's {} collapser", kind.name()));
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DTRACE: &[u8] = b"CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s\n\n\n              libc.so.1`_write+0x8\n              a.out`main+0x20\n              a.out`_start+0x7d\n                5\n\n              a.out`spin+0x1\n              a.out`main+0x30\n              a.out`_start+0x7d\n                7\n";

    #[test]
    fn reads_dtrace_through_inferno() {
        assert_eq!(probe(Kind::Dtrace, DTRACE, true), Some(true));
        assert_ne!(probe(Kind::Dtrace, b"a;b 1\nc;d 2\n", true), Some(true));
        let p = parse(Kind::Dtrace, DTRACE, &Progress::default()).unwrap_or_default();
        assert_eq!(p.format, "dtrace");
        assert_eq!(p.total(0), 12);
        let main = p.frames.get(b"a.out`main");
        assert!(
            main.is_some(),
            "frames: {:?}",
            p.frames
                .ids()
                .map(|f| p.frames.name(f).into_owned())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for kind in [
            Kind::Dtrace,
            Kind::Sample,
            Kind::Vtune,
            Kind::Vsprof,
            Kind::Ghcprof,
            Kind::Xctrace,
        ] {
            let r = parse(
                kind,
                &b"\x00\xff garbage \n\n 12 \n<xml"[..],
                &Progress::default(),
            );
            assert!(
                r.is_err() || r.is_ok_and(|p| p.samples.len() < 3),
                "{kind:?}"
            );
        }
    }
}

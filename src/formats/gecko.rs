//! Firefox Profiler / Gecko profile JSON.
//!
//! Not written yet: the probe never claims an input, so detection skips it.

use std::io::Read;

use super::ParseError;
use crate::input::Progress;
use crate::model::Profile;

/// Whether `head` is this format (see [`super::folded::probe`] for the contract).
pub fn probe(_head: &[u8], _complete: bool) -> Option<bool> {
    Some(false)
}

/// Reads a whole profile.
pub fn parse(_reader: impl Read, _progress: &Progress) -> Result<Profile, ParseError> {
    Err(ParseError::Invalid {
        line: 0,
        message: "this format is not supported yet".into(),
    })
}

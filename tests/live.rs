//! Live reload (issue 5): the resumable line parsers, the file follower under every
//! way tools write files, the watcher and the pipe reader.
//!
//! The follower tests write from a real thread while the test polls at arbitrary
//! points, and then require the follower's profile to be exactly what
//! `formats::load` reads from the final file: no sample lost or counted twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "live/follow.rs"]
mod follow;
#[path = "live/signals.rs"]
mod signals;
#[path = "live/stream.rs"]
mod stream;

use std::io::Read;
use std::path::Path;

use ember::model::Profile;

/// The repository file `rel`, un-gzipped if it ends in `.gz`.
pub fn sample(rel: &str) -> Vec<u8> {
    let path = common::repo().join(rel);
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !rel.ends_with(".gz") {
        return raw;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// perf script text: the first `blocks` samples of the repository's perf sample.
pub fn perf_blocks(blocks: usize) -> Vec<u8> {
    let all = sample("samples/perf-python-wordindex-small.perf.gz");
    let mut end = 0;
    for _ in 0..blocks {
        match memchr::memmem::find(&all[end..], b"\n\n") {
            Some(i) => end += i + 2,
            None => return all,
        }
    }
    all[..end].to_vec()
}

/// Folded text: the repository's larger folded sample.
pub fn folded_sample() -> Vec<u8> {
    sample("samples/perf-python-wordindex.folded")
}

/// Fails unless `a` and `b` are the same profile: same frames, stacks, samples
/// (every column), value types, notes, warnings, threads and metadata.
pub fn assert_same(a: &Profile, b: &Profile, what: &str) {
    assert_eq!(a.format, b.format, "{what}: format");
    assert_eq!(a.frames.len(), b.frames.len(), "{what}: frame count");
    for f in a.frames.ids() {
        assert_eq!(a.frames.raw(f), b.frames.raw(f), "{what}: frame {f:?}");
    }
    assert_eq!(a.stacks.prefixes(), b.stacks.prefixes(), "{what}: stacks");
    assert_eq!(a.stacks.frames(), b.stacks.frames(), "{what}: stack frames");
    let (x, y) = (&a.samples, &b.samples);
    assert_eq!(x.stack, y.stack, "{what}: sample stacks");
    assert_eq!(x.values, y.values, "{what}: sample values");
    assert_eq!(x.time, y.time, "{what}: sample times");
    assert_eq!(x.thread, y.thread, "{what}: sample threads");
    assert_eq!(x.cpu, y.cpu, "{what}: sample cpus");
    assert_eq!(x.labels, y.labels, "{what}: sample labels");
    assert_eq!(a.value_types, b.value_types, "{what}: value types");
    assert_eq!(a.default_value, b.default_value, "{what}: default value");
    assert_eq!(a.notes, b.notes, "{what}: notes");
    assert_eq!(a.warnings, b.warnings, "{what}: warnings");
    assert_eq!(a.threads, b.threads, "{what}: threads");
    assert_eq!(a.label_sets, b.label_sets, "{what}: label sets");
    assert_eq!(a.frame_meta, b.frame_meta, "{what}: frame meta");
    assert_eq!(a.meta, b.meta, "{what}: meta");
}

/// Fails unless `got` is what `formats::load` reads from `path` now, compared as
/// the user sees it (sample count, totals, folded rendering) and exactly.
pub fn assert_matches_load(got: Option<std::sync::Arc<Profile>>, path: &Path, what: &str) {
    let Some(got) = got else {
        panic!("{what}: the follower has no profile");
    };
    let want = match common::load_path(path) {
        Ok(p) => p,
        Err(e) => panic!("{what}: loading the final file failed: {e}"),
    };
    assert_eq!(got.samples.len(), want.samples.len(), "{what}: samples");
    for v in 0..want.value_types.len() {
        assert_eq!(got.total(v), want.total(v), "{what}: total of value {v}");
    }
    assert_eq!(
        common::folded_text(&got),
        common::folded_text(&want),
        "{what}: folded"
    );
    assert_same(&got, &want, what);
}

/// A small deterministic generator (xorshift) for chunk sizes and pauses.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

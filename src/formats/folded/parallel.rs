//! A big folded file parsed on two threads: split at a line end near the
//! middle, each half parsed by its own `Folder`, the second absorbed into the
//! first so the result is what one pass in order gives.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use memchr::{memchr, memrchr};

use super::Folder;
use crate::formats::ParseError;
use crate::model::stacks::NO_PREFIX;
use crate::model::{FrameId, StackId};
use crate::sources::input::{FileId, Progress, reopen_same};

impl Folder {
    /// Appends what `other` parsed from the lines right after this one's, as if
    /// this folder had read them itself: frames and stacks re-interned, samples
    /// in order, warnings with their line numbers moved on, counts in common
    /// decimals. False (and `self` may be half-changed: parse again) when the
    /// halves disagree on the form (one count or two) or the decimals overflow.
    fn absorb(&mut self, mut other: Folder) -> bool {
        self.attach();
        other.attach();
        match (self.diff, other.diff) {
            (Some(a), Some(b)) if a != b => return false,
            // The first sample line settles the form; it was in `other`.
            (None, Some(_)) => return false,
            _ => {}
        }
        let d = self.decimals.max(other.decimals);
        if !self.widen(d) || !other.widen(d) {
            return false;
        }
        let o = &other.profile;
        let fmap: Vec<FrameId> = o
            .frames
            .ids()
            .map(|f| self.profile.frames.intern(o.frames.raw(f)))
            .collect();
        // Stacks in id order: a prefix is mapped before its stacks.
        self.profile.stacks.reserve(o.stacks.len());
        self.builder.reserve(o.stacks.len());
        let n = o.value_types.len();
        self.profile.samples.stack.reserve(o.samples.len());
        self.profile.samples.values.reserve(o.samples.len() * n);
        // Names compared by rank: a few thousand names sorted once instead of
        // a byte comparison per stack.
        let names = &self.profile.frames;
        let mut ids: Vec<FrameId> = names.ids().collect();
        ids.sort_unstable_by(|a, b| names.raw(*a).cmp(names.raw(*b)));
        let mut rank = vec![0u32; ids.len()];
        for (r, f) in ids.iter().enumerate() {
            rank[f.0 as usize] = r as u32;
        }
        let greater = |a: FrameId, b: FrameId| rank[a.0 as usize] > rank[b.0 as usize];
        let mut smap: Vec<u32> = Vec::with_capacity(o.stacks.len());
        for (&pre, &f) in o.stacks.prefixes().iter().zip(o.stacks.frames()) {
            let prefix = (pre != NO_PREFIX).then(|| StackId(smap[pre as usize]));
            let id = self.builder.child_by(
                &mut self.profile.stacks,
                greater,
                prefix,
                fmap[f.0 as usize],
            );
            smap.push(id.0);
        }
        for (i, &s) in o.samples.stack.iter().enumerate() {
            let stack = (s != u32::MAX).then(|| StackId(smap[s as usize]));
            self.profile
                .push_sample(stack, &o.samples.values[i * n..(i + 1) * n]);
        }
        let w = &mut self.profile.warnings;
        for x in &o.warnings.first {
            w.push(x.line + self.line_no, x.message.clone());
        }
        w.count += o.warnings.count - o.warnings.first.len() as u64;
        for note in &o.notes {
            if !self.profile.notes.contains(note) {
                self.profile.notes.push(note.clone());
            }
        }
        self.line_no += other.line_no;
        self.empty_frames += other.empty_frames;
        // The previous line is `other`'s last, whose frames this folder does
        // not know: the next line shares none (a speed-up only).
        self.path.clear();
        self.ends.clear();
        self.prev_owned.clear();
        true
    }
}

/// Inputs smaller than this are parsed on one thread: splitting would save less
/// than it costs. A variable only so that tests can split small files.
static PARALLEL_MIN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(256 << 20);

/// Splits folded files from `bytes` up for a parallel parse (tests only: the
/// default is 256 MiB).
#[doc(hidden)]
pub fn set_parallel_min(bytes: u64) {
    PARALLEL_MIN.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// Parses bytes `start..end` of the file at `path` on two threads, each half
/// through its own handle, and merges the halves into what one pass in order
/// gives: the same samples in the same order, frames, warnings with their line
/// numbers, notes. Returns the state after the last complete line and the bytes
/// after it (the input's unfinished last line). `None` when the input is not
/// worth splitting or cannot be split (no line end near the middle, halves that
/// disagree on the form, a path that no longer names the file `id`): then
/// parse it in one pass.
///
/// Why: parsing is the first frame's cost, and a big profile is read on a
/// host with at least two cores (1m.folded: about 1.2 s on one).
pub(crate) fn parse_parallel(
    path: &Path,
    id: FileId,
    start: u64,
    end: u64,
    progress: &Arc<Progress>,
) -> Option<Result<(Folder, Vec<u8>), ParseError>> {
    let min = PARALLEL_MIN.load(std::sync::atomic::Ordering::Relaxed);
    split_parse(path, id, start, end, progress, min)
}

fn split_parse(
    path: &Path,
    id: FileId,
    start: u64,
    end: u64,
    progress: &Arc<Progress>,
    min: u64,
) -> Option<Result<(Folder, Vec<u8>), ParseError>> {
    if end.saturating_sub(start) < min.max(2) {
        return None;
    }
    let mid = line_start_after(reopen_same(path, id)?, start + (end - start) / 2, end)?;
    // Each half reads through its own handle on the same file: one renamed
    // over the path meanwhile is not mixed in (the half says `None`).
    let half = |from: u64, to: u64| -> Result<Option<(Folder, Vec<u8>)>, ParseError> {
        let Some(mut file) = reopen_same(path, id) else {
            return Ok(None);
        };
        file.seek(SeekFrom::Start(from)).map_err(ParseError::Io)?;
        let reader = crate::sources::input::counting(file.take(to - from), progress.clone());
        let mut folder = Folder::new();
        let mut rest = Vec::new();
        let mut read = 0u64;
        crate::formats::for_each_line_chunk(reader, progress, |lines, eof| {
            read += lines.len() as u64;
            let cut = if eof {
                memrchr(b'\n', lines).map_or(0, |i| i + 1)
            } else {
                lines.len()
            };
            folder.chunk(&lines[..cut], false);
            rest.extend_from_slice(&lines[cut..]);
        })?;
        // A half that met the end of the file early saw it truncated (and
        // perhaps written again behind it): its bytes and the other half's
        // would not be one file's. Then parse in one pass.
        if read != to - from {
            return Ok(None);
        }
        Ok(Some((folder, rest)))
    };
    let (a, b) = std::thread::scope(|s| {
        let second = s.spawn(|| half(mid, end));
        let first = half(start, mid);
        let second = second
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (first, second)
    });
    let ((mut a, a_rest), (b, b_rest)) = match (a, b) {
        (Ok(Some(a)), Ok(Some(b))) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        _ => return None,
    };
    // The first half ends at a line end unless the file changed under us.
    if !a_rest.is_empty() || !a.absorb(b) {
        return None;
    }
    Some(Ok((a, b_rest)))
}

/// The offset just after the first `\n` at or after `at` (before `end`), if
/// one is within 1 MiB.
fn line_start_after(mut file: File, at: u64, end: u64) -> Option<u64> {
    file.seek(SeekFrom::Start(at)).ok()?;
    let mut window = Vec::new();
    file.take((1 << 20).min(end - at))
        .read_to_end(&mut window)
        .ok()?;
    let i = memchr(b'\n', &window)?;
    let mid = at + i as u64 + 1;
    (mid < end).then_some(mid)
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;
    use crate::model::Profile;

    fn id_of(path: &Path) -> FileId {
        FileId::of(&std::fs::metadata(path).unwrap_or_else(|e| panic!("{e}")))
    }

    /// The two-thread parse of `text` (split near its middle) against one pass.
    fn parallel_equals_parse(text: &[u8], what: &str) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("p.folded");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        let progress = Progress::new();
        let want = parse(text, &progress).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        let (mut folder, rest) =
            match split_parse(&path, id_of(&path), 0, text.len() as u64, &progress, 0) {
                Some(Ok(r)) => r,
                Some(Err(e)) => panic!("{what}: {e:?}"),
                None => panic!("{what}: not split"),
            };
        folder.chunk(&rest, true);
        let got = folder.finish();
        let rows = |p: &Profile| -> Vec<(Vec<String>, Vec<i64>)> {
            let n = p.value_types.len();
            (0..p.samples.len())
                .map(|i| {
                    let names = p.samples.stack_of(i).map_or_else(Vec::new, |s| {
                        p.stacks
                            .path(s)
                            .iter()
                            .map(|&f| p.frames.name(f).into_owned())
                            .collect()
                    });
                    (names, p.samples.values[i * n..(i + 1) * n].to_vec())
                })
                .collect()
        };
        assert_eq!(rows(&got), rows(&want), "{what}: samples");
        assert_eq!(got.value_types, want.value_types, "{what}: value types");
        assert_eq!(got.warnings, want.warnings, "{what}: warnings");
        assert_eq!(got.notes, want.notes, "{what}: notes");
        assert_eq!(
            got.stacks.len(),
            want.stacks.len(),
            "{what}: no stack twice"
        );
        assert_eq!(got.meta.diff.is_some(), want.meta.diff.is_some(), "{what}");
    }

    #[test]
    fn two_halves_parse_like_one_pass() {
        let mut big = Vec::new();
        for i in 0..400 {
            big.extend_from_slice(format!("main;f{};g{} {}\n", i % 7, i % 3, i + 1).as_bytes());
        }
        parallel_equals_parse(&big, "plain");
        // Warnings and empty frames on both sides, no newline at the end.
        let mut text = b"a;b 1\nbad line\na;;c 2\n".repeat(50);
        text.extend_from_slice(b"a;b 3\nno count\nx;;y 4");
        parallel_equals_parse(&text, "warnings");
        // Decimals that appear only in the second half, or only in the first.
        let mut late = b"a;b 1\n".repeat(100);
        late.extend_from_slice(&b"a;c 0.25\n".repeat(100));
        parallel_equals_parse(&late, "late decimals");
        let mut early = b"a;c 0.5\n".repeat(100);
        early.extend_from_slice(&b"a;b 2\n".repeat(100));
        parallel_equals_parse(&early, "early decimals");
        // The two-count form, on both sides.
        parallel_equals_parse(&b"a;b 1 2\na;c 3 0\n".repeat(100), "two counts");
        // Comments only before the middle: the form is settled after it.
        let mut comments = b"# nothing yet\n".repeat(100);
        comments.extend_from_slice(&b"a;b 1 2\n".repeat(10));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("c.folded");
        std::fs::write(&path, &comments).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            split_parse(
                &path,
                id_of(&path),
                0,
                comments.len() as u64,
                &Progress::new(),
                0
            )
            .is_none(),
            "halves that would disagree are parsed in one pass"
        );
    }

    #[test]
    fn a_file_renamed_over_the_path_is_not_read_into_the_halves() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("p.folded");
        let text = b"a;b 1\n".repeat(100);
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let first = id_of(&path);
        let other = dir.path().join("q.folded");
        std::fs::write(&other, b"x;y 2\n".repeat(100)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&other, &path).unwrap_or_else(|e| panic!("{e}"));
        let len = text.len() as u64;
        assert!(split_parse(&path, first, 0, len, &Progress::new(), 0).is_none());
        assert!(split_parse(&path, id_of(&path), 0, len, &Progress::new(), 0).is_some());
    }

    #[test]
    fn a_file_shorter_than_the_range_is_not_split() {
        // What a truncation during the read looks like to a half: the end of
        // the file before the end of its range. The follower would otherwise
        // take bytes it never read as read (a CI flake lost two samples so).
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("p.folded");
        let text = b"a;b 1\n".repeat(100);
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let (id, len) = (id_of(&path), text.len() as u64);
        assert!(split_parse(&path, id, 0, len, &Progress::new(), 0).is_some());
        assert!(split_parse(&path, id, 0, len + 60, &Progress::new(), 0).is_none());
    }
}

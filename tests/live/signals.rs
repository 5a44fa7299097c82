//! The watcher (real OS events), the pipe reader and the folder listing.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use ember::error::LoadError;
use ember::formats::LoadOptions;
use ember::live::{follow_reader, profiles_in, watch_dir, watch_file};
use ember::model::Profile;
use ember::sources::input::Progress;

use crate::{assert_matches_load, assert_same, folded_sample, perf_blocks};

/// Generous: a slow CI machine must not make these flaky.
const PATIENCE: Duration = Duration::from_secs(5);

fn notified(rx: &Receiver<()>) -> bool {
    rx.recv_timeout(PATIENCE).is_ok()
}

/// Waits until no notice came for `quiet`, dropping those that did.
fn settle(rx: &Receiver<()>, quiet: Duration) {
    while rx.recv_timeout(quiet).is_ok() {}
}

#[test]
fn the_watcher_fires_after_an_append_a_rename_over_and_a_delete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.folded");
    fs::write(&path, b"a;b 1\n").unwrap();
    let (tx, rx) = mpsc::channel();
    let handle = watch_file(&path, move || {
        let _ = tx.send(());
    })
    .unwrap();
    assert!(handle.is_native(), "inotify should be available here");
    settle(&rx, Duration::from_millis(150));

    let t = Instant::now();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"a;c 2\n").unwrap();
    drop(f);
    assert!(notified(&rx), "no notice after an append");
    let latency = t.elapsed();
    settle(&rx, Duration::from_millis(150));

    // Reading the file (as the follower does) is no change.
    let mut text = String::new();
    File::open(&path)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "a read woke the watcher"
    );

    // Another file in the folder is none of its business.
    fs::write(dir.path().join("other.txt"), b"x").unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());

    let tmp = dir.path().join(".live.folded.tmp");
    fs::write(&tmp, b"a;d 3\n").unwrap();
    fs::rename(&tmp, &path).unwrap();
    assert!(notified(&rx), "no notice after a rename-over");
    settle(&rx, Duration::from_millis(150));

    fs::remove_file(&path).unwrap();
    assert!(notified(&rx), "no notice after a delete");
    settle(&rx, Duration::from_millis(150));
    fs::write(&path, b"a;e 4\n").unwrap();
    assert!(notified(&rx), "no notice after the file came back");
    drop(handle);
    common_say(&format!("watcher: an append was noticed after {latency:?}"));
}

fn common_say(line: &str) {
    crate::common::say(line);
}

#[test]
fn the_folder_watcher_fires_for_any_entry_and_the_fallback_polls() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    let handle = watch_dir(dir.path(), move || {
        let _ = tx.send(());
    })
    .unwrap();
    fs::write(dir.path().join("new.folded"), b"a 1\n").unwrap();
    assert!(notified(&rx), "no notice for a new file");
    drop(handle);

    // A folder that does not exist cannot be watched by the OS: it is polled, and a
    // file appearing there is noticed within the poll interval.
    let missing = dir.path().join("not-yet");
    let (tx, rx) = mpsc::channel();
    let handle = watch_file(&missing.join("p.folded"), move || {
        let _ = tx.send(());
    })
    .unwrap();
    assert!(!handle.is_native());
    fs::create_dir(&missing).unwrap();
    fs::write(missing.join("p.folded"), b"a 1\n").unwrap();
    assert!(
        notified(&rx),
        "the polling fallback did not notice the file"
    );
}

#[test]
fn profiles_in_lists_profiles_oldest_first_without_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (name, age) in [
        ("b.folded", 3),
        ("a.folded", 3),
        ("old.pb.gz", 9),
        ("new.json", 1),
        (".hidden", 5),
        ("c.folded~", 5),
        ("d.tmp", 5),
        ("e.swp", 5),
        ("f.part", 5),
        ("g.crdownload", 5),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, b"a 1\n").unwrap();
        let f = File::options().write(true).open(&path).unwrap();
        f.set_modified(base - Duration::from_secs(age)).unwrap();
    }
    fs::create_dir(dir.path().join("sub")).unwrap();
    let names: Vec<String> = profiles_in(dir.path())
        .unwrap()
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(names, ["old.pb.gz", "a.folded", "b.folded", "new.json"]);
}

/// A reader that hands out `bytes` in small pieces with a pause before each, like
/// a profiler writing into a pipe.
struct Trickle {
    bytes: Vec<u8>,
    at: usize,
    piece: usize,
    pause: Duration,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.bytes.len() {
            return Ok(0);
        }
        thread::sleep(self.pause);
        let n = self.piece.min(buf.len()).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Runs `follow_reader` over `bytes` handed out `piece` bytes at a time, a snapshot
/// at most every 20 ms.
fn trickle(
    bytes: Vec<u8>,
    piece: usize,
    pause: Duration,
    emit: impl FnMut(Profile, bool),
) -> Result<(), LoadError> {
    let reader = Trickle {
        bytes,
        at: 0,
        piece,
        pause,
    };
    let options = LoadOptions::default();
    let every = Duration::from_millis(20);
    follow_reader(reader, "<stdin>", &options, &Progress::new(), every, emit)
}

/// Follows `bytes` through a trickling reader; returns every emitted profile and
/// whether it was the last.
fn follow(bytes: Vec<u8>, pieces: usize, pause: Duration) -> Vec<(Profile, bool)> {
    let piece = bytes.len().div_ceil(pieces);
    let mut emitted = Vec::new();
    let result = trickle(bytes, piece, pause, |p, done| emitted.push((p, done)));
    if let Err(e) = result {
        panic!("follow_reader failed: {e}");
    }
    emitted
}

/// The final emitted profile equals `formats::load` of the same bytes as a file.
fn last_equals_load(emitted: &[(Profile, bool)], bytes: &[u8], what: &str) {
    let Some((last, true)) = emitted.last() else {
        panic!("{what}: no final profile");
    };
    let n = emitted.iter().filter(|(_, done)| *done).count();
    assert_eq!(n, 1, "{what}: one final profile");
    let input = crate::common::write_input("piped", bytes);
    assert_matches_load(Some(std::sync::Arc::new(last.clone())), &input.path, what);
}

#[test]
fn a_pipe_shows_the_profile_building_up_and_keeps_it_at_the_end() {
    for (what, bytes) in [("folded", folded_sample()), ("perf", perf_blocks(150))] {
        let emitted = follow(bytes.clone(), 30, Duration::from_millis(8));
        let partial = emitted.iter().filter(|(_, done)| !done).count();
        assert!(
            partial >= 2,
            "{what}: {partial} snapshots while data flowed"
        );
        let counts: Vec<usize> = emitted.iter().map(|(p, _)| p.samples.len()).collect();
        assert!(
            counts.windows(2).all(|w| w[0] <= w[1]),
            "{what}: samples went down: {counts:?}"
        );
        assert!(counts[0] < counts[counts.len() - 1], "{what}: {counts:?}");
        last_equals_load(&emitted, &bytes, what);
    }
}

#[test]
fn a_pipe_of_another_format_or_gzip_is_emitted_whole() {
    let json = crate::sample("samples/pyspy-orders-report.speedscope.json");
    let emitted = follow(json.clone(), 10, Duration::from_millis(2));
    assert_eq!(emitted.len(), 1, "one profile, at the end");
    last_equals_load(&emitted, &json, "speedscope");

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&folded_sample()).unwrap();
    let gz = gz.finish().unwrap();
    let emitted = follow(gz.clone(), 10, Duration::from_millis(2));
    let Some((last, true)) = emitted.last() else {
        panic!("no final profile");
    };
    assert_eq!(last.format, "folded (gzip)");
    last_equals_load(&emitted, &gz, "gzipped folded");
    let direct = crate::common::load_bytes(&folded_sample());
    assert_eq!(last.samples.len(), direct.samples.len());
}

#[test]
fn a_pipe_that_says_nothing_or_garbage_is_an_error_naming_it() {
    for bytes in [&b""[..], b"  \n\n", b"\x00\x01\x02 binary \x00"] {
        let mut emitted = 0;
        let result = trickle(bytes.to_vec(), 4, Duration::ZERO, |_, _| emitted += 1);
        let Err(e) = result else {
            panic!("{bytes:?} should not load");
        };
        assert!(e.to_string().starts_with("<stdin>"), "{e}");
        assert_eq!(emitted, 0);
    }
}

#[test]
fn a_snapshot_from_the_pipe_equals_the_stream_so_far() {
    // Two pieces: the first emit is the first half's complete lines.
    let bytes = folded_sample();
    let emitted = follow(bytes.clone(), 2, Duration::from_millis(60));
    let (first, done) = &emitted[0];
    assert!(!done);
    let half = bytes.len().div_ceil(2);
    let end = bytes[..half]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let want = crate::common::load_bytes(&bytes[..end]);
    assert_same(first, &want, "first snapshot");
}

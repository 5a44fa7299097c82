//! `Follower`: every way tools write a file, with polls interleaved at arbitrary
//! points; half-written files keep the last good profile.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use ember::formats::LoadOptions;
use ember::live::{Follower, Update};
use ember::sources::input::Progress;

use crate::{Rng, assert_matches_load, folded_sample, perf_blocks, sample};

/// What a poll returned, without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unchanged,
    Missing,
    Appended,
    Reloaded,
    Incomplete,
}

fn kind(u: &Update) -> Kind {
    match u {
        Update::Unchanged => Kind::Unchanged,
        Update::Missing => Kind::Missing,
        Update::Appended { .. } => Kind::Appended,
        Update::Reloaded { .. } => Kind::Reloaded,
        Update::Incomplete(_) => Kind::Incomplete,
    }
}

fn poll(f: &mut Follower) -> Update {
    f.poll(&Progress::new())
}

fn count(kinds: &[Kind], k: Kind) -> usize {
    kinds.iter().filter(|&&x| x == k).count()
}

/// Runs `write` on a thread while polling `follower` every few hundred µs, then
/// polls once more after it ended; returns every poll's kind.
fn follow_while(follower: &mut Follower, write: impl FnOnce() + Send + 'static) -> Vec<Kind> {
    let writer = thread::spawn(write);
    let progress = Progress::new();
    let mut kinds = Vec::new();
    let mut rng = Rng(0x9e37_79b9);
    while !writer.is_finished() {
        kinds.push(kind(&follower.poll(&progress)));
        thread::sleep(Duration::from_micros(100 + rng.below(600)));
    }
    writer.join().expect("the writer thread panicked");
    kinds.push(kind(&follower.poll(&progress)));
    kinds
}

/// Appends `bytes` to `path` (creating it) in random pieces, most of them ending
/// inside a line, with short pauses.
fn append_in_chunks(path: &Path, bytes: &[u8], seed: u64, max_chunk: u64) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    let mut rng = Rng(seed);
    let mut at = 0;
    while at < bytes.len() {
        let end = (at + 1 + rng.below(max_chunk) as usize).min(bytes.len());
        file.write_all(&bytes[at..end]).unwrap();
        file.flush().unwrap();
        at = end;
        thread::sleep(Duration::from_micros(rng.below(400)));
    }
}

fn setup(name: &str) -> (tempfile::TempDir, PathBuf, Follower) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let follower = Follower::new(path.clone(), LoadOptions::default());
    (dir, path, follower)
}

/// Appends the whole of `text` to a file that starts empty-ish; the follower
/// reads it once and then only appends.
fn follows_appends(name: &str, text: Vec<u8>, max_chunk: u64) {
    let (_dir, path, mut follower) = setup(name);
    let first = text.len() / 10;
    fs::write(&path, &text[..first]).unwrap();
    let writer_path = path.clone();
    let kinds = follow_while(&mut follower, move || {
        append_in_chunks(&writer_path, &text[first..], 5, max_chunk);
    });
    assert_matches_load(follower.profile(), &path, name);
    assert_eq!(count(&kinds, Kind::Reloaded), 1, "{name}: {kinds:?}");
    assert!(count(&kinds, Kind::Appended) >= 3, "{name}: {kinds:?}");
    assert_eq!(count(&kinds, Kind::Incomplete), 0, "{name}: {kinds:?}");
}

#[test]
fn follows_a_folded_file_appended_in_pieces() {
    follows_appends("app.folded", folded_sample(), 3000);
}

#[test]
fn follows_a_perf_script_file_appended_in_pieces() {
    follows_appends("perf.script", perf_blocks(400), 3000);
}

#[test]
fn follows_a_file_truncated_and_rewritten() {
    let (_dir, path, mut follower) = setup("rewritten.folded");
    let text = folded_sample();
    let (v1, v2) = (text[..text.len() / 2].to_vec(), text.clone());
    let p = path.clone();
    let kinds = follow_while(&mut follower, move || {
        append_in_chunks(&p, &v1, 1, 20_000);
        thread::sleep(Duration::from_millis(5));
        File::create(&p).unwrap();
        append_in_chunks(&p, &v2[..v2.len() / 3], 2, 20_000);
        thread::sleep(Duration::from_millis(5));
        File::create(&p).unwrap();
        append_in_chunks(&p, &v2, 3, 20_000);
    });
    assert_matches_load(follower.profile(), &path, "truncated and rewritten");
    assert!(count(&kinds, Kind::Reloaded) >= 2, "{kinds:?}");
}

#[test]
fn follows_a_file_renamed_over_again_and_again() {
    // Through the two-thread parse too, whose handles must all be the file the
    // read opened, not whatever was renamed over the path since.
    ember::formats::folded::set_parallel_min(1);
    let (dir, path, mut follower) = setup("renamed.folded");
    let text = folded_sample();
    let tmp = dir.path().join("renamed.folded.tmp");
    let p = path.clone();
    let kinds = follow_while(&mut follower, move || {
        for (i, cut) in [3, 1, 2, 4, 4].into_iter().enumerate() {
            let mut version = text[..text.len() * cut / 4].to_vec();
            // A different last line each time, so that no version equals another.
            version.extend_from_slice(format!("version;{i} {}\n", i + 1).as_bytes());
            fs::write(&tmp, &version).unwrap();
            fs::rename(&tmp, &p).unwrap();
            thread::sleep(Duration::from_millis(3));
        }
    });
    assert_matches_load(follower.profile(), &path, "renamed over");
    assert_eq!(count(&kinds, Kind::Appended), 0, "{kinds:?}");
    assert_eq!(count(&kinds, Kind::Incomplete), 0, "{kinds:?}");
}

#[test]
fn follows_a_file_deleted_and_made_again() {
    let (_dir, path, mut follower) = setup("recreated.script");
    let text = perf_blocks(200);
    let p = path.clone();
    let kinds = follow_while(&mut follower, move || {
        append_in_chunks(&p, &text[..text.len() / 2], 1, 8000);
        thread::sleep(Duration::from_millis(5));
        fs::remove_file(&p).unwrap();
        thread::sleep(Duration::from_millis(5));
        append_in_chunks(&p, &text, 2, 8000);
    });
    assert_matches_load(follower.profile(), &path, "deleted and made again");
    assert!(count(&kinds, Kind::Missing) >= 1, "{kinds:?}");
}

#[test]
fn follows_a_file_that_does_not_exist_yet() {
    let (_dir, path, mut follower) = setup("later.folded");
    assert!(matches!(poll(&mut follower), Update::Missing));
    assert!(follower.profile().is_none());
    let text = folded_sample();
    let p = path.clone();
    let kinds = follow_while(&mut follower, move || {
        thread::sleep(Duration::from_millis(10));
        append_in_chunks(&p, &text, 4, 3000);
    });
    assert_matches_load(follower.profile(), &path, "made later");
    assert_eq!(kinds.first(), Some(&Kind::Missing), "{kinds:?}");
    assert!(count(&kinds, Kind::Appended) >= 1, "{kinds:?}");
}

#[test]
fn each_change_is_read_the_cheapest_way_that_is_right() {
    let (dir, path, mut follower) = setup("steps.folded");
    fs::write(&path, b"a;b 1\na;c").unwrap();
    // The partial last line is not an error: it is read when it is whole.
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 1 }
    ));
    assert!(matches!(poll(&mut follower), Update::Unchanged));
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b" 2\na;b 3\n").unwrap();
    drop(f);
    let u = poll(&mut follower);
    assert!(
        matches!(
            u,
            Update::Appended {
                new_samples: 2,
                new_bytes: 9
            }
        ),
        "{u:?}"
    );
    assert_matches_load(follower.take_profile(), &path, "after an append");
    // A rewrite longer than what was read, seen only once it is longer: the bytes
    // before the old end differ, so it is read again, not appended to.
    fs::write(&path, b"x;y 5\nx;z 6\nx;y 7\nx 1\n").unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 4 }
    ));
    assert_matches_load(follower.profile(), &path, "after a longer rewrite");
    // Shorter: a truncation.
    fs::write(&path, b"q 1\n").unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 1 }
    ));
    // Same size, other bytes, another mtime: a rewrite. The same bytes with another
    // mtime (a touch, or a write that has not grown the file yet): nothing new.
    let touch = |secs: u64| {
        let when = std::time::SystemTime::now() + Duration::from_secs(secs);
        let f = File::options().write(true).open(&path).unwrap();
        f.set_modified(when).unwrap();
    };
    fs::write(&path, b"q 2\n").unwrap();
    touch(10);
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 1 }
    ));
    assert_eq!(follower.profile().map(|p| p.total(0)), Some(2));
    touch(20);
    assert!(matches!(poll(&mut follower), Update::Unchanged));
    // Renamed over with the same size and content: still another file.
    let tmp = dir.path().join("next");
    fs::write(&tmp, b"q 2\n").unwrap();
    fs::rename(&tmp, &path).unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 1 }
    ));
    // Deleted: the last good profile stays; made again: read from the start.
    fs::remove_file(&path).unwrap();
    assert!(matches!(poll(&mut follower), Update::Missing));
    assert_eq!(follower.profile().map(|p| p.samples.len()), Some(1));
    fs::write(&path, b"r 1\nr;s 2\n").unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 2 }
    ));
    assert_matches_load(follower.profile(), &path, "made again");
}

/// Writes `bytes` cut to `keep` of their length, then whole: the cut file is
/// `Incomplete`, keeps the last good profile, and is not retried unchanged.
/// Returns whether `load` salvaged the cut file (rather than refusing it).
fn incomplete_then_whole(name: &str, bytes: &[u8], keep: usize) -> bool {
    let (_dir, path, mut follower) = setup(name);
    fs::write(&path, b"good;one 1\ngood;two 2\n").unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 2 }
    ));
    fs::write(&path, &bytes[..keep]).unwrap();
    // `load` refuses the cut file, or (pprof) shows what it could read of it.
    let salvaged = match crate::common::load_path(&path) {
        Err(_) => false,
        Ok(p) => p
            .warnings
            .first
            .iter()
            .any(|w| w.message.contains("truncated")),
    };
    assert!(
        salvaged || crate::common::load_path(&path).is_err(),
        "{name}: the cut file should not load whole"
    );
    let u = poll(&mut follower);
    assert!(matches!(u, Update::Incomplete(_)), "{name}: {u:?}");
    assert!(matches!(poll(&mut follower), Update::Unchanged), "{name}");
    let kept = follower.profile().map(|p| p.samples.len());
    assert_eq!(kept, Some(2), "{name}: the last good profile is kept");
    fs::write(&path, bytes).unwrap();
    let u = poll(&mut follower);
    assert!(matches!(u, Update::Reloaded { .. }), "{name}: {u:?}");
    assert_matches_load(follower.profile(), &path, name);
    salvaged
}

#[test]
fn a_half_written_gzip_or_protobuf_keeps_the_last_good_profile() {
    let gz = fs::read(crate::common::repo().join("samples/go-loganalytics.pb.gz")).unwrap();
    assert!(!incomplete_then_whole("cpu.pb.gz", &gz, gz.len() / 2));
    let pb = sample("samples/go-loganalytics.pb.gz");
    assert!(!incomplete_then_whole("cpu.pb", &pb, pb.len() / 3));
    // Cut late, the pprof loader salvages the fields before the cut (with a
    // warning): that is no better than a refusal here.
    assert!(incomplete_then_whole(
        "late-cut.pb",
        &pb,
        pb.len() * 9 / 10 + 1
    ));
    let json = sample("samples/node-inventory-sync.cpuprofile");
    assert!(!incomplete_then_whole(
        "app.cpuprofile",
        &json,
        json.len() / 2
    ));
    let mut folded_gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    folded_gz.write_all(&folded_sample()).unwrap();
    let folded_gz = folded_gz.finish().unwrap();
    assert!(!incomplete_then_whole(
        "app.folded.gz",
        &folded_gz,
        folded_gz.len() - 9
    ));
}

#[test]
fn a_first_read_of_a_half_written_file_has_no_profile() {
    let (_dir, path, mut follower) = setup("first.pb");
    let pb = sample("samples/go-loganalytics.pb.gz");
    fs::write(&path, &pb[..pb.len() / 3]).unwrap();
    assert!(matches!(poll(&mut follower), Update::Incomplete(_)));
    assert!(follower.profile().is_none());
    fs::write(&path, &pb).unwrap();
    assert!(matches!(poll(&mut follower), Update::Reloaded { .. }));
    assert_matches_load(follower.profile(), &path, "first read whole");
}

#[test]
fn a_byte_order_mark_is_skipped_and_appends_still_resume() {
    let (_dir, path, mut follower) = setup("bom.folded");
    fs::write(&path, b"\xef\xbb\xbfa;b 1\na;c 2\n").unwrap();
    assert!(matches!(
        poll(&mut follower),
        Update::Reloaded { samples: 2 }
    ));
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"a;b 3\n").unwrap();
    drop(f);
    let u = poll(&mut follower);
    assert!(
        matches!(u, Update::Appended { new_samples: 1, .. }),
        "{u:?}"
    );
    assert_matches_load(follower.profile(), &path, "after a BOM");
}

#[test]
fn a_follower_can_move_to_a_loader_thread() {
    fn send<T: Send>() {}
    send::<Follower>();
    send::<Update>();
}

#[test]
fn a_cancelled_reload_is_tried_again() {
    let (_dir, path, mut follower) = setup("cancel.folded");
    fs::write(&path, folded_sample()).unwrap();
    let progress = Progress::new();
    progress.cancel();
    let u = follower.poll(&progress);
    assert!(
        matches!(u, Update::Incomplete(ember::error::LoadError::Cancelled)),
        "{u:?}"
    );
    let u = follower.poll(&Arc::new(Progress::default()));
    assert!(matches!(u, Update::Reloaded { .. }), "{u:?}");
}

#[test]
fn a_file_parsed_on_two_threads_follows_like_one_read_in_order() {
    // Every folded file of this test binary is big enough to split from here
    // on (the other tests then take the same path, which must agree too).
    ember::formats::folded::set_parallel_min(1);
    let (_dir, path, mut follower) = setup("split.folded");
    let mut text = folded_sample();
    text.extend_from_slice(b"bad line\nz;y");
    fs::write(&path, &text).unwrap();
    assert!(matches!(poll(&mut follower), Update::Reloaded { .. }));
    // The unfinished last line waits; what came before it is all there.
    let whole = text.len() - 3;
    fs::write(path.with_extension("head"), &text[..whole]).unwrap();
    assert_matches_load(follower.profile(), &path.with_extension("head"), "split");
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b" 4\nz;y;x 5\n").unwrap();
    drop(f);
    let u = poll(&mut follower);
    assert!(
        matches!(u, Update::Appended { new_samples: 2, .. }),
        "{u:?}"
    );
    assert_matches_load(follower.take_profile(), &path, "split, then appended");
}

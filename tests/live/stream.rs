//! `LineStream`: fed in pieces cut anywhere, it equals `parse` of the whole, and a
//! snapshot equals `parse` of what was fed up to the last complete line.

use ember::formats::stream::LineStream;
use ember::formats::{Format, Granularity, ParseError, folded, perf};
use ember::model::Profile;
use ember::sources::input::Progress;

use crate::{Rng, assert_same, perf_blocks, sample};

fn parse(format: Format, bytes: &[u8]) -> Result<Profile, ParseError> {
    let progress = Progress::default();
    match format {
        Format::Perf => perf::parse(bytes, &progress),
        _ => folded::parse(bytes, &progress),
    }
}

fn same_result(a: Result<Profile, ParseError>, b: Result<Profile, ParseError>, what: &str) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_same(&a, &b, what),
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}"),
        (a, b) => panic!("{what}: {:?} vs {:?}", a.map(|_| ()), b.map(|_| ())),
    }
}

fn stream(format: Format) -> LineStream {
    match LineStream::new(format, Granularity::Function) {
        Some(s) => s,
        None => panic!("{format:?} has no line stream"),
    }
}

/// The bytes up to and including the last `\n` of `bytes[..k]`.
fn complete_lines(bytes: &[u8], k: usize) -> &[u8] {
    let end = bytes[..k]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

/// Cuts `input` in two at every byte: the snapshot after the first part equals
/// `parse` of its complete lines, and the finished stream equals `parse` of all.
fn split_everywhere(format: Format, input: &[u8]) {
    let whole = match parse(format, input) {
        Ok(p) if p.samples.len() >= 3 => p,
        _ => panic!("{format:?}: the test input should have samples"),
    };
    for k in 0..=input.len() {
        let mut s = stream(format);
        s.feed(&input[..k]);
        let what = format!("{format:?} cut at {k}");
        let head = complete_lines(input, k);
        same_result(s.snapshot(), parse(format, head), &what);
        let before = s.samples();
        s.feed(&input[k..]);
        assert!(s.samples() >= before, "{what}: samples went down");
        match s.finish() {
            Ok(p) => assert_same(&p, &whole, &what),
            Err(e) => panic!("{what}: {e:?}"),
        }
    }
}

/// Feeds `input` in many random pieces, taking snapshots in between.
fn random_pieces(format: Format, input: &[u8], seed: u64) {
    let mut rng = Rng(seed);
    let mut s = stream(format);
    let mut at = 0;
    while at < input.len() {
        let n = 1 + rng.below(300) as usize;
        let end = (at + n).min(input.len());
        s.feed(&input[at..end]);
        at = end;
        if rng.below(4) == 0 {
            let what = format!("{format:?} snapshot at {at}");
            same_result(
                s.snapshot(),
                parse(format, complete_lines(input, at)),
                &what,
            );
        }
    }
    assert_eq!(s.bytes_fed(), input.len() as u64);
    same_result(
        s.finish(),
        parse(format, input),
        &format!("{format:?} pieces"),
    );
}

/// Shared prefixes across lines, partial-frame prefixes, decimals that widen half-way,
/// blank, comment, bad and CRLF lines, blanks after counts, empty frames.
const FOLDED: &[u8] = b"\
# a comment
a;bc;d 1
a;bc;e 2
a;b;e 3
a;bc 4
a;bcx 5

a;bcx 0.5
no count here
a;bc;d 1.25\r
a;b;;e 2 \t
a;b; 3
x 99999
a;bc;d 7";

#[test]
fn folded_fed_in_two_pieces_cut_at_every_byte_equals_parse() {
    split_everywhere(Format::Folded, FOLDED);
    let diff = b"a;b 1 2\na;c 3 4\na;c;d 0 5\nbad 1\na;b 1 1\n";
    split_everywhere(Format::Folded, diff);
}

#[test]
fn perf_fed_in_two_pieces_cut_at_every_byte_equals_parse() {
    let mut input = b"\
# ========
# hostname : box
# cmdline : /usr/bin/perf record -g
a continued value
# ========
#
"
    .to_vec();
    input.extend_from_slice(&perf_blocks(3));
    // An event right after a stack (no blank line), a bad line, an unfinished stack.
    input.extend_from_slice(
        b"bash  7000/7000 [000] 2185.990000:    1001 cycles:u: \n\
          \t  1f00 main (/bin/bash)\n\
          bash  7000/7000 [000] 2185.991000:    1001 cycles:u: \n\
          \t  1f10 read (/bin/bash)\n\
          what is this\n\
          \n\
          bash  7000/7000 [000] 2185.992000:    1001 cycles:u: \n\
          \t  1f20 write (/bin/bash)",
    );
    split_everywhere(Format::Perf, &input);
}

#[test]
fn random_pieces_with_snapshots_in_between_equal_parse() {
    let folded = sample("samples/pyspy-orders-report.folded");
    random_pieces(Format::Folded, &folded, 7);
    random_pieces(Format::Perf, &perf_blocks(60), 11);
}

#[test]
fn a_snapshot_counts_an_unfinished_perf_sample_once() {
    let input = perf_blocks(2);
    // Cut after the second event's first frame line: the snapshot ends that sample
    // (as `parse` at the end of input would), the stream does not.
    let second = memchr::memmem::find(&input, b"\n\n").map_or(0, |i| i + 2);
    let frame = second + memchr::memchr(b'\n', &input[second..]).map_or(0, |i| i + 1);
    let cut = frame + memchr::memchr(b'\n', &input[frame..]).map_or(0, |i| i + 1);
    let mut s = stream(Format::Perf);
    s.feed(&input[..cut]);
    assert_eq!(s.samples(), 1, "the unfinished sample is not counted yet");
    let snap = s.snapshot().map(|p| p.samples.len()).ok();
    assert_eq!(snap, Some(2), "the snapshot ends the unfinished sample");
    assert_eq!(s.samples(), 1, "a snapshot leaves the stream as it was");
    s.feed(&input[cut..]);
    let done = s.finish().map(|p| p.samples.len()).ok();
    assert_eq!(done, Some(2));
}

#[test]
fn only_line_formats_stream() {
    assert!(LineStream::new(Format::Folded, Granularity::Function).is_some());
    assert!(LineStream::new(Format::Perf, Granularity::Function).is_some());
    assert!(LineStream::new(Format::Pprof, Granularity::Function).is_none());
    assert!(LineStream::new(Format::Speedscope, Granularity::Function).is_none());
}

/// Feeds `input` in random pieces and shares the profile in between (held
/// on to or let go, as a view would), instead of snapshots: each share equals
/// `parse` of the complete lines so far, and so does the end.
fn random_pieces_shared(input: &[u8], seed: u64) {
    let mut rng = Rng(seed);
    let mut s = stream(Format::Folded);
    let mut held = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let n = 1 + rng.below(300) as usize;
        let end = (at + n).min(input.len());
        s.feed(&input[at..end]);
        at = end;
        if rng.below(3) == 0 {
            let what = format!("shared at {at}");
            let Some(p) = s.share() else {
                panic!("folded shares its profile");
            };
            same_result(
                Ok((*p).clone()),
                parse(Format::Folded, complete_lines(input, at)),
                &what,
            );
            // A second share without new lines is the same profile.
            let again = s.share().map(|q| std::sync::Arc::ptr_eq(&p, &q));
            assert_eq!(again, Some(true), "{what}");
            if rng.below(2) == 0 {
                held.push((p, at));
            }
        }
    }
    same_result(
        s.finish(),
        parse(Format::Folded, input),
        "shared pieces, finished",
    );
    // What the views held is what was parsed then, untouched by what followed.
    for (p, at) in held {
        same_result(
            Ok((*p).clone()),
            parse(Format::Folded, complete_lines(input, at)),
            &format!("held from {at}"),
        );
    }
}

#[test]
fn sharing_the_profile_between_pieces_equals_parse() {
    let folded = sample("samples/pyspy-orders-report.folded");
    random_pieces_shared(&folded, 3);
    random_pieces_shared(FOLDED, 5);
    // Unsorted: after a share the builder resumes on stacks in any order.
    let mut lines: Vec<&[u8]> = folded.split(|&b| b == b'\n').collect();
    lines.reverse();
    random_pieces_shared(&lines.join(&b'\n'), 9);
}

#[test]
fn perf_script_does_not_share() {
    let mut s = stream(Format::Perf);
    s.feed(&perf_blocks(3));
    assert!(s.share().is_none());
}

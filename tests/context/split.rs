//! A big iostat text log is read in two halves on two threads
//! (`context::iostat` split): what the merge gives must be what one pass
//! gives, to the value, warning and line number. The threshold is lowered so
//! that every input here is split (and the split is checked to have happened).

use std::fmt::Write;
use std::sync::Mutex;

use ember::context::{self, ContextOptions, ContextSource};

/// The threshold is one global: the tests that move it take turns.
static TURN: Mutex<()> = Mutex::new(());

/// Parses `text` in one pass and split; asserts both give the same, and
/// returns whether the split path was taken.
fn both_ways(text: &[u8], name: &str, opts: &ContextOptions) -> bool {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    context::set_iostat_parallel_min(u64::MAX);
    let one = context::parse_with(text, name, opts);
    context::set_iostat_parallel_min(1);
    let before = context::iostat_parallel_splits();
    let two = context::parse_with(text, name, opts);
    let split = context::iostat_parallel_splits() > before;
    context::set_iostat_parallel_min(16 << 20);
    match (one, two) {
        (Ok(a), Ok(b)) => same(&a, &b),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (a, b) => panic!("{name}: one pass {a:?}, split {b:?}"),
    }
    split
}

fn same(a: &ContextSource, b: &ContextSource) {
    let n = &a.name;
    assert_eq!(a.kind, b.kind, "{n}");
    assert_eq!((&a.host, a.n_cpus), (&b.host, b.n_cpus), "{n}");
    assert_eq!(a.clock, b.clock, "{n}");
    assert_eq!(a.intervals, b.intervals, "{n}");
    assert_eq!(a.warnings, b.warnings, "{n}");
    let keys = |s: &ContextSource| -> Vec<String> {
        let k = s
            .series
            .iter()
            .map(|c| format!("{:?} {:?}", c.metric, c.entity));
        k.collect()
    };
    assert_eq!(keys(a), keys(b), "{n}: series");
    for (x, y) in a.series.iter().zip(&b.series) {
        let bits = |v: &[f32]| -> Vec<Option<u32>> {
            v.iter()
                .map(|f| (!f.is_nan()).then_some(f.to_bits()))
                .collect()
        };
        assert_eq!(
            bits(&x.values),
            bits(&y.values),
            "{n}: {:?} {:?}",
            x.metric,
            x.entity
        );
    }
}

const BANNER: &str = "Linux 6.18.44 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\n";
const CPU: &str = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n";
const DEV: &str = "Device            r/s     rkB/s  aqu-sz  %util\n";

/// `k` reports of `-x -t` text, each with the stamp `stamp(k)` and the rows
/// `rows(k)`.
fn reports(
    head: &str,
    k: u32,
    stamp: impl Fn(u32) -> String,
    rows: impl Fn(u32) -> String,
) -> String {
    let mut s = head.to_string();
    for i in 0..k {
        let st = stamp(i);
        if !st.is_empty() {
            let _ = writeln!(s, "{st}");
        }
        let _ = write!(
            s,
            "{CPU}   {}.{:02}    0.00    8.75    0.28    0.24   54.05\n\n{DEV}{}\n\n",
            30 + i % 7,
            i % 100,
            rows(i)
        );
    }
    s
}

fn vda(i: u32) -> String {
    format!("vda   {}.50  {}.25  0.12  {}.25", i % 90, i * 3, i % 50)
}

fn c_stamp(day: u32, i: u32) -> String {
    let t = 86_390 + i;
    let d = day + t / 86_400;
    let t = t % 86_400;
    format!(
        "12/{d:02}/26 {:02}:{:02}:{:02}",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

fn check(name: &str, text: &str) {
    check_with(name, text, &ContextOptions::default());
}

fn check_with(name: &str, text: &str, opts: &ContextOptions) {
    assert!(both_ways(text.as_bytes(), name, opts), "{name}: not split");
}

#[test]
fn midnight_roll_over_and_devices_coming_and_going() {
    let t = reports(
        BANNER,
        20,
        |i| c_stamp(2, i),
        |i| match i {
            0..=4 => format!("{}\nsdz   1.00  2.00  0.00  0.10", vda(i)),
            15.. => format!("{}\nloop0  1.00  4.00  0.00  0.10", vda(i)),
            _ => vda(i),
        },
    );
    check("midnight", &t);
    // -y: no since-boot report; the split half never has one either
    let y = ContextOptions::from_command("iostat -x -y -t 1");
    check_with("midnight-y", &t, &y);
}

#[test]
fn warnings_clamps_and_a_cut_last_line_keep_their_line_numbers() {
    let mut t = reports(
        BANNER,
        12,
        |i| c_stamp(2, i),
        |i| match i {
            3 => format!("{}\nzzz", vda(i)),
            9 => "vda 1.0 2.0 3.0 150.0\nvda2 1.0 x 3.0 4.0\nvdb 1 2".to_string(),
            _ => vda(i),
        },
    );
    t.push_str("12/03/26 00:00:30\navg-cpu:  %user\nvda   50.00  46");
    check("warnings", &t);
}

#[test]
fn human_layout_no_timestamps_iso_zones_epochs_and_am_pm() {
    let mut h = BANNER.to_string();
    for i in 0..10 {
        let _ = write!(
            h,
            "{}\n{CPU}   55.3%    0.0%   13.5%    1.1%    0.4%   29.6%\n\n\
             \x20    r/s     rkB/s Device\n  5{i}.36     26.2M vda\n    0.00      0.{i}k loop0\n\n\
             \x20    f/s f_await  aqu-sz  %util Device\n    0.91    0.06    0.64   {i}.3% vda\n\n\n",
            c_stamp(2, i)
        );
    }
    check("human", &h);
    let none = reports(BANNER, 10, |_| String::new(), vda);
    check("no-stamps", &none);
    let two_blanks = reports(&format!("{BANNER}\n"), 10, |_| String::new(), vda);
    check("no-stamps-y", &two_blanks);
    let iso = reports(BANNER, 10, |i| format!("2026-12-02T23:59:5{i}+0530"), vda);
    check("iso", &iso);
    let epoch = reports(BANNER, 10, |i| format!("179621212{i}"), vda);
    check("epoch", &epoch);
    let pm = reports(
        BANNER,
        10,
        |i| match i {
            0..=4 => format!("12/01/2026 11:59:5{} PM", i + 5),
            _ => format!("12/02/2026 12:00:0{} AM", i - 5),
        },
        vda,
    );
    check("am-pm", &pm);
}

#[test]
fn what_only_the_second_half_says_decides_for_the_whole_file() {
    // day-first dates: only the decimal commas of the second half tell
    let fr = reports(
        "Linux 6.18 (vm) \t02/12/2026 \t_x86_64_\t(2 CPU)\n\n",
        10,
        |i| format!("0{}/12/2026 11:48:4{i}", 2 + i / 5),
        |i| match i {
            0..=5 => "vda  1.50  2.25  0.10  3.50".to_string(),
            _ => "vda  1,50  2,25  0,10  3,50".to_string(),
        },
    );
    check("comma", &fr);
    // logs appended to one another: the last banner wins
    let a = reports(BANNER, 6, |i| c_stamp(2, i), vda);
    let b = reports(
        "Linux 6.19.1 (other) \t12/03/26 \t_x86_64_\t(8 CPU)\n\n",
        6,
        |i| c_stamp(3, i),
        vda,
    );
    check("appended", &(a + &b));
}

#[test]
fn device_and_cpu_only_reports() {
    let mut d = BANNER.to_string();
    for i in 0..10 {
        let _ = write!(d, "{}\n{DEV}{}\n\n", c_stamp(2, i), vda(i));
    }
    check("d-only", &d);
    let mut c = BANNER.to_string();
    for i in 0..10 {
        let _ = write!(
            c,
            "{}\n{CPU}   {i}.00    0.00    8.75    0.28    0.24   54.05\n\n",
            c_stamp(2, i)
        );
    }
    check("c-only", &c);
}

#[test]
fn every_iostat_text_file_of_the_corpus_reads_the_same_split() {
    let Some(dir) = super::dir() else {
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("iostat"))
        .collect();
    names.sort();
    let mut split = 0;
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let kind = context::parse(&bytes, name).map(|s| s.kind);
        if !matches!(kind, Ok(context::ContextKind::IostatText)) {
            continue;
        }
        split += usize::from(both_ways(&bytes, name, &super::options(name)));
    }
    assert!(split >= 10, "only {split} corpus files split");
}

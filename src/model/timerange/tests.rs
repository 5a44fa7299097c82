use super::*;
use crate::model::testing::profile_from_lines;

#[test]
fn marks_files_read_points_ranges_and_dated_times() {
    let text = "# deploys\n10:02:13 deploy v2.3\n09:58-10:06 deploy window\n\n2026-12-02 11:00:00 restart\n12.5 gc storm\n";
    let m = parse_marks(text, "marks.txt").unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<(&str, bool, &str)> = m
        .iter()
        .map(|m| (m.time.as_str(), m.range, m.label.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("10:02:13", false, "deploy v2.3"),
            ("09:58-10:06", true, "deploy window"),
            ("2026-12-02 11:00:00", false, "restart"),
            ("12.5", false, "gc storm"),
        ]
    );
    let e = parse_marks("10:00 ok\nsoon deploy\n", "m.txt")
        .err()
        .unwrap_or_default();
    assert!(e.contains("m.txt: line 2"), "{e}");
    let p = timed(5 * NS as u64);
    let placed = TimeSelection::default()
        .place_marks(&parse_marks("1 a\n2-3 b\n", "m").unwrap_or_default(), &p)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        placed[0].0,
        Window {
            start: 6 * NS as u64,
            end: 6 * NS as u64 + 1
        }
    );
    assert_eq!(
        placed[1].0,
        Window {
            start: 7 * NS as u64,
            end: 8 * NS as u64
        }
    );
}

#[test]
fn offsets_read_like_a_person_writes_them() {
    assert_eq!(parse_offset("12.5"), Some(12_500_000_000));
    assert_eq!(parse_offset("12.5s"), Some(12_500_000_000));
    assert_eq!(parse_offset("250ms"), Some(250_000_000));
    assert_eq!(parse_offset("1m30s"), Some(90 * NS));
    assert_eq!(parse_offset("1h2m3s"), Some(3723 * NS));
    assert_eq!(parse_offset("-2s"), Some(-2 * NS));
    assert_eq!(parse_offset("2x"), None);
    assert_eq!(parse_offset("s"), None);
    assert_eq!(parse_offset(""), None);
}

#[test]
fn wall_times_with_dates_and_zones() {
    let t: TimePoint = "11:56:28".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t,
        TimePoint::Wall {
            ns: (11 * 3600 + 56 * 60 + 28) * NS,
            dated: false,
            utc_offset_s: None
        }
    );
    let t: TimePoint = "2026-12-02T11:56:28.5+05:30"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let day = days_from_civil(2026, 12, 2);
    assert_eq!(
        t,
        TimePoint::Wall {
            ns: day * DAY_NS + (11 * 3600 + 56 * 60 + 28) * NS + NS / 2,
            dated: true,
            utc_offset_s: Some(19_800)
        }
    );
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    assert!("25:00:00".parse::<TimePoint>().is_err());
    assert!("11:5x".parse::<TimePoint>().is_err());
}

#[test]
fn ranges_split_where_both_sides_are_times() {
    let (a, b) = parse_range("09:58-10:06").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(a, TimePoint::Wall { dated: false, .. }));
    assert!(matches!(b, TimePoint::Wall { dated: false, .. }));
    let (a, b) = parse_range("12-15.5").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (a, b),
        (
            TimePoint::Offset(12 * NS),
            TimePoint::Offset(15_500_000_000)
        )
    );
    let (a, _) =
        parse_range("2026-12-02 11:00:00-2026-12-02 11:05:00").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(a, TimePoint::Wall { dated: true, .. }));
    assert!(parse_range("12").is_err());
}

/// Four samples a second apart, one stack each, starting at `t0`.
fn timed(t0: u64) -> Profile {
    let mut p = profile_from_lines(&["a;b 1", "a;c 1", "a;b 1", "a;d 1"]);
    p.samples.time = Some((0..4).map(|i| t0 + i * NS as u64).collect());
    p.meta.duration_ns = Some(4 * NS as u64);
    p
}

#[test]
fn a_range_keeps_the_samples_inside_it() {
    let p = timed(5 * NS as u64);
    let sel = TimeSelection {
        from: Some("1".into()),
        to: Some("3s".into()),
        ..TimeSelection::default()
    };
    let f = sel.resolve(&p).unwrap_or_else(|e| panic!("{e}"));
    let cut = slice(&p, &f).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cut.samples.len(), 2);
    assert_eq!(cut.samples.time, Some(vec![6 * NS as u64, 7 * NS as u64]));
    assert_eq!(cut.meta.duration_ns, Some(2 * NS as u64));
    let sel = TimeSelection {
        exclude: vec!["0.5-2.5".into()],
        ..TimeSelection::default()
    };
    let f = sel.resolve(&p).unwrap_or_else(|e| panic!("{e}"));
    let cut = slice(&p, &f).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cut.samples.len(), 2);
    let sel = TimeSelection {
        from: Some("10".into()),
        ..TimeSelection::default()
    };
    let f = sel.resolve(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(slice(&p, &f), Err(RangeError::Empty { .. })));
}

#[test]
fn wall_times_need_a_wall_clock_and_take_the_first_samples_date() {
    let p = timed(5 * NS as u64);
    let sel = TimeSelection {
        from: Some("11:00:00".into()),
        ..TimeSelection::default()
    };
    assert!(matches!(
        sel.resolve(&p),
        Err(RangeError::NoWallClock { .. })
    ));
    // 2026-12-02 23:59:58 UTC, four samples across midnight.
    let start = (days_from_civil(2026, 12, 2) * DAY_NS + (86_398 * NS)) as u64;
    let p = timed(start);
    let sel = TimeSelection {
        from: Some("23:59:59".into()),
        to: Some("00:00:01".into()),
        ..TimeSelection::default()
    };
    let f = sel.resolve(&p).unwrap_or_else(|e| panic!("{e}"));
    let cut = slice(&p, &f).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cut.samples.len(), 2, "{f:?}");
    let mut untimed = profile_from_lines(&["a 1"]);
    untimed.samples.time = None;
    let sel = TimeSelection {
        from: Some("1".into()),
        ..TimeSelection::default()
    };
    assert_eq!(sel.resolve(&untimed), Err(RangeError::NoTimes));
}

//! Per-line cost of the functions a pattern names, as `go tool pprof -list`
//! counts it: a profile read at line granularity has a frame per (function,
//! file, line); a line's flat is that frame's self weight and its cum its
//! total (a sample counted once however often the line is on its stack); a
//! routine (one function in one file) sums its lines.

use std::collections::BTreeMap;

use super::granularity::{Granularity, frame_key};
use super::profile::Profile;
use super::top::TopTable;
use super::tree::CallTree;

/// One source line's weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineCost {
    pub line: u32,
    pub flat: i64,
    pub cum: i64,
}

/// A function in one file, with the lines that carry weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routine {
    pub function: String,
    /// The file the profile records for it (`None`: it records none).
    pub file: Option<String>,
    /// Sums of the lines' flat and cum, as pprof's ROUTINE header gives them.
    pub flat: i64,
    pub cum: i64,
    /// Sorted by line.
    pub lines: Vec<LineCost>,
}

/// The routines of `profile` (read at [`Granularity::Line`]) whose function
/// name `matches`, weighed by `tree`, by name then file. Frames without a
/// line number are left out: there is no line to put them on.
pub fn routines(
    profile: &Profile,
    tree: &CallTree,
    matches: impl Fn(&str) -> bool,
) -> Vec<Routine> {
    let table = TopTable::build(profile, tree);
    // (function, file) -> line -> (flat, cum)
    type Lines = BTreeMap<u32, (i64, i64)>;
    let mut by: BTreeMap<(String, Option<String>), Lines> = BTreeMap::new();
    for row in &table.rows {
        let key = frame_key(profile, row.frame, Granularity::Line, Granularity::Function);
        let function = String::from_utf8_lossy(&key).into_owned();
        if !matches(&function) {
            continue;
        }
        let meta = profile.frame_meta.get(&row.frame);
        let file = meta.and_then(|m| m.file.clone()).filter(|f| !f.is_empty());
        // A frame without a line (a process root, code without line tables)
        // has nothing to list.
        let Some(line) = meta.and_then(|m| m.line).filter(|&l| l > 0) else {
            continue;
        };
        let cost = by
            .entry((function, file))
            .or_default()
            .entry(line)
            .or_default();
        cost.0 += row.self_weight;
        cost.1 += row.total;
    }
    by.into_iter()
        .map(|((function, file), lines)| {
            let lines: Vec<LineCost> = lines
                .into_iter()
                .map(|(line, (flat, cum))| LineCost { line, flat, cum })
                .collect();
            Routine {
                function,
                file,
                flat: lines.iter().map(|l| l.flat).sum(),
                cum: lines.iter().map(|l| l.cum).sum(),
                lines,
            }
        })
        .collect()
}

/// One line on both sides of a comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinePair {
    pub line: u32,
    /// `[before, after]` in the compared value.
    pub flat: [i64; 2],
    pub cum: [i64; 2],
    /// The samples behind `cum` on each side (for the significance test).
    pub samples: [i64; 2],
}

/// A routine on both sides of a comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairedRoutine {
    pub function: String,
    pub file: Option<String>,
    /// Sorted by line.
    pub lines: Vec<LinePair>,
}

impl PairedRoutine {
    /// The lines with weight on either side.
    pub fn weighted(&self) -> Vec<u32> {
        self.lines
            .iter()
            .filter(|l| l.cum != [0, 0])
            .map(|l| l.line)
            .collect()
    }
}

/// Joins the routines of a comparison's four columns (before, after, and
/// their sample counts, in that order) by function, file and line.
pub fn join_sides(sides: &[Vec<Routine>]) -> Vec<PairedRoutine> {
    type Lines = BTreeMap<u32, LinePair>;
    let mut by: BTreeMap<(String, Option<String>), Lines> = BTreeMap::new();
    for (col, routines) in sides.iter().enumerate().take(4) {
        for r in routines {
            let lines = by.entry((r.function.clone(), r.file.clone())).or_default();
            for l in &r.lines {
                let p = lines.entry(l.line).or_default();
                p.line = l.line;
                match col {
                    0 | 1 => {
                        p.flat[col] += l.flat;
                        p.cum[col] += l.cum;
                    }
                    _ => p.samples[col - 2] += l.cum,
                }
            }
        }
    }
    by.into_iter()
        .map(|((function, file), lines)| PairedRoutine {
            function,
            file,
            lines: lines.into_values().collect(),
        })
        .collect()
}

/// The routines of a comparison whose function `matches`, each line on both
/// sides: the four columns (before, after and their sample counts) weighed
/// by a tree each and joined. Empty for a profile that is no comparison.
pub fn paired_routines(profile: &Profile, matches: impl Fn(&str) -> bool) -> Vec<PairedRoutine> {
    let Some(meta) = profile.meta.diff.as_deref() else {
        return Vec::new();
    };
    let columns = [
        meta.sides[0].value,
        meta.sides[1].value,
        meta.sides[0].count,
        meta.sides[1].count,
    ];
    let sides: Vec<Vec<Routine>> = columns
        .iter()
        .map(|&value| {
            let options = super::TreeOptions {
                value,
                ..super::TreeOptions::default()
            };
            routines(profile, &CallTree::build(profile, options), &matches)
        })
        .collect();
    join_sides(&sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TreeOptions;
    use crate::model::profile::FrameMeta;
    use crate::model::testing::profile_from_lines;

    /// `main` calls `work` from line 10 and 12; `work` spends its time on
    /// line 3 and 4; `main`'s line 10 recurses into itself once.
    #[test]
    fn lines_weigh_flat_and_cum_and_routines_sum_them() {
        let mut p = profile_from_lines(&[
            "main m.go:10;work w.go:3 5",
            "main m.go:10;work w.go:4 2",
            "main m.go:12;work w.go:3 1",
            "main m.go:10;main m.go:10 4",
        ]);
        for (name, file, line) in [
            ("main m.go:10", "m.go", 10),
            ("main m.go:12", "m.go", 12),
            ("work w.go:3", "w.go", 3),
            ("work w.go:4", "w.go", 4),
        ] {
            let Some(f) = p.frames.get(name.as_bytes()) else {
                panic!("{name}");
            };
            p.frame_meta.insert(
                f,
                FrameMeta {
                    file: Some(file.into()),
                    line: Some(line),
                    ..FrameMeta::default()
                },
            );
        }
        let tree = CallTree::build(&p, TreeOptions::default());
        let all = routines(&p, &tree, |_| true);
        let names: Vec<&str> = all.iter().map(|r| r.function.as_str()).collect();
        assert_eq!(names, ["main", "work"]);
        let main = &all[0];
        // Line 10: 5 + 2 + 4 samples on the stack, counted once each; 4 of
        // them end there (the recursion's own).
        assert_eq!(
            main.lines,
            [
                LineCost {
                    line: 10,
                    flat: 4,
                    cum: 11
                },
                LineCost {
                    line: 12,
                    flat: 0,
                    cum: 1
                },
            ]
        );
        assert_eq!((main.flat, main.cum), (4, 12));
        let work = &all[1];
        assert_eq!(work.file.as_deref(), Some("w.go"));
        assert_eq!(
            work.lines,
            [
                LineCost {
                    line: 3,
                    flat: 6,
                    cum: 6
                },
                LineCost {
                    line: 4,
                    flat: 2,
                    cum: 2
                },
            ]
        );
        assert!(routines(&p, &tree, |f| f == "nothing").is_empty());
    }
}

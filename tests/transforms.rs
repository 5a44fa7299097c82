//! Transforms and recipes on the bundled samples (`samples/*.folded`) and the test
//! fixtures: each transform against a naive per-sample model of it, conserved
//! totals, focus and drop partitioning the samples, identities, columns kept in
//! step, and recipes through TOML files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use common::{folded_text, load_path, repo};
use ember::model::recipe::{Recipe, RecipeError};
use ember::model::transform::{Transform, TransformError, apply, apply_all};
use ember::model::{Profile, ValueType};
use regex::Regex;

/// The bundled folded samples, then the fixtures.
fn folded_profiles() -> Vec<(String, Profile)> {
    let samples = common::folded_files(&repo().join("samples"));
    assert!(samples.len() >= 2, "expected samples/*.folded");
    let fixtures = common::folded_files(&repo().join("tests/fixtures"));
    samples
        .iter()
        .chain(&fixtures)
        .map(|f| {
            let p = load_path(f).unwrap_or_else(|e| panic!("{e}"));
            (short(f), p)
        })
        .collect()
}

fn short(f: &Path) -> String {
    f.strip_prefix(repo()).unwrap_or(f).display().to_string()
}

fn run(p: &Profile, t: &Transform) -> Profile {
    apply(p, t).unwrap_or_else(|e| panic!("{t}: {e}"))
}

fn focus(re: &str) -> Transform {
    Transform::Focus {
        pattern: re.to_string(),
    }
}

fn drop_(re: &str) -> Transform {
    Transform::Drop {
        pattern: re.to_string(),
    }
}

fn merge(re: &str) -> Transform {
    Transform::Merge {
        pattern: re.to_string(),
    }
}

/// Patterns that hit the samples in different ways: frames at many depths,
/// recursive interpreter frames, a recursive-descent parser, roots, leaves, none.
const PATTERNS: &[&str] = &[
    "^_PyEval_EvalFrameDefault$",
    "^_PyEval",
    "Vectorcall",
    "^python3",
    "^\\[unknown\\]$",
    "^Parser\\.parse_",
    "parse_atom",
    "^main ",
    "tokenize",
    "^<module>",
    "malloc|free",
    "^(a|b|c)$",
    "^b$",
    "e",
];

/// A frame name (shared: paths are cloned a lot).
type Name = Rc<str>;

/// Each sample as (frame names from the root, default value).
fn sample_paths(p: &Profile) -> Vec<(Vec<Name>, i64)> {
    let n = p.value_types.len();
    let names: Vec<Name> = p
        .frames
        .ids()
        .map(|f| Name::from(p.frames.name(f)))
        .collect();
    (0..p.samples.len())
        .map(|i| {
            let names = p.samples.stack_of(i).map_or_else(Vec::new, |s| {
                p.stacks
                    .path(s)
                    .iter()
                    .map(|&f| names[f.0 as usize].clone())
                    .collect()
            });
            (names, p.samples.values[i * n + p.default_value])
        })
        .collect()
}

/// Default-value weight per stack path, summing samples.
type Folded = BTreeMap<Vec<Name>, i64>;

fn folded(p: &Profile) -> Folded {
    collect(sample_paths(p).into_iter().map(|(path, w)| (Some(path), w)))
}

fn collect(paths: impl Iterator<Item = (Option<Vec<Name>>, i64)>) -> Folded {
    let mut out = Folded::new();
    for (path, w) in paths {
        if let Some(path) = path {
            *out.entry(path).or_default() += w;
        }
    }
    out
}

/// What `t` should give to `p`, computed sample by sample on name paths.
fn naive(p: &Profile, t: &Transform) -> Folded {
    naive_on(&sample_paths(p), t)
}

/// [`naive`] on the samples' paths (see [`sample_paths`]).
fn naive_on(samples: &[(Vec<Name>, i64)], t: &Transform) -> Folded {
    // The names that match, each tested once (a regex per frame is slow unoptimised).
    let re = |pattern: &str| {
        let re = Regex::new(pattern).unwrap();
        let hits: HashSet<&str> = samples
            .iter()
            .flat_map(|(path, _)| path)
            .map(|n| &**n)
            .filter(|n| re.is_match(n))
            .collect();
        move |n: &str| hits.contains(n)
    };
    let each = |f: &dyn Fn(&[Name]) -> Option<Vec<Name>>| {
        collect(samples.iter().map(|(path, w)| (f(path), *w)))
    };
    match t {
        Transform::Focus { pattern } => {
            let re = re(pattern);
            each(&|path| path.iter().position(|n| re(n)).map(|i| path[i..].to_vec()))
        }
        Transform::Drop { pattern } => {
            let re = re(pattern);
            each(&|path| (!path.iter().any(|n| re(n))).then(|| path.to_vec()))
        }
        Transform::Merge { pattern } => {
            let re = re(pattern);
            each(&|path| Some(path.iter().filter(|n| !re(n)).cloned().collect()))
        }
        Transform::Hide { path: target } => each(&|path| {
            let mut path = path.to_vec();
            let hit =
                path.len() >= target.len() && path.iter().zip(target).all(|(a, b)| **a == **b);
            if hit {
                path.remove(target.len() - 1);
            }
            Some(path)
        }),
        Transform::CollapseRecursion { indirect: false } => each(&|path| {
            let mut path = path.to_vec();
            path.dedup();
            Some(path)
        }),
        Transform::CollapseRecursion { indirect: true } => each(&|path| {
            let mut out: Vec<Name> = Vec::new();
            for name in path {
                match out.iter().position(|n| n == name) {
                    Some(i) => out.truncate(i + 1),
                    None => out.push(name.clone()),
                }
            }
            Some(out)
        }),
        Transform::MinWidth { percent } => {
            // A trie of the paths (node 0 is the root) with a width per node.
            let mut node: HashMap<(usize, Name), usize> = HashMap::new();
            let mut width = vec![0u64];
            let mut nodes: Vec<Vec<usize>> = Vec::new();
            for (path, w) in samples {
                let mut at = 0;
                let mut here = Vec::new();
                for name in path {
                    let next = width.len();
                    at = *node.entry((at, name.clone())).or_insert(next);
                    if at == next {
                        width.push(0);
                    }
                    width[at] += w.unsigned_abs();
                    here.push(at);
                }
                width[0] += w.unsigned_abs();
                nodes.push(here);
            }
            let limit = percent / 100.0 * width[0] as f64;
            collect(samples.iter().zip(&nodes).map(|((path, w), here)| {
                let keep = here
                    .iter()
                    .take_while(|&&n| (width[n] as f64) >= limit)
                    .count();
                (Some(path[..keep].to_vec()), *w)
            }))
        }
        // Cuts samples by time, not paths: tests/cli.rs checks it against perf
        // script events filtered by timestamp.
        Transform::TimeRange { .. } => panic!("no time-range oracle over paths"),
    }
}

/// Some node paths of `p` to hide: prefixes of a few samples' stacks at several
/// depths.
fn hide_paths(p: &Profile) -> Vec<Vec<String>> {
    let samples = sample_paths(p);
    let mut out = Vec::new();
    for i in [0, samples.len() / 3, samples.len() / 2, samples.len() - 1] {
        let path = &samples[i].0;
        for k in [1, 2, 3, path.len() / 2, path.len()] {
            if k >= 1 && k <= path.len() {
                out.push(path[..k].iter().map(|n| n.to_string()).collect());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn every_transform(p: &Profile) -> Vec<Transform> {
    let mut ts: Vec<Transform> = PATTERNS
        .iter()
        .flat_map(|re| [focus(re), drop_(re), merge(re)])
        .collect();
    ts.extend(structural_transforms(p));
    ts
}

/// The transforms without a pattern: hides, collapses, minimum widths.
fn structural_transforms(p: &Profile) -> Vec<Transform> {
    let mut ts: Vec<Transform> = hide_paths(p)
        .into_iter()
        .map(|path| Transform::Hide { path })
        .collect();
    ts.push(Transform::CollapseRecursion { indirect: false });
    ts.push(Transform::CollapseRecursion { indirect: true });
    for percent in [0.0, 0.1, 1.0, 5.0, 30.0, 100.0] {
        ts.push(Transform::MinWidth { percent });
    }
    ts
}

/// The result is a well-formed profile: prefixes before stacks, no stack twice
/// (duplicate siblings would split a node in two), sample columns of one length,
/// stack ids in range, frames untouched.
fn check_well_formed(name: &str, before: &Profile, p: &Profile) {
    for (s, &pre) in p.stacks.prefixes().iter().enumerate() {
        assert!(pre == u32::MAX || (pre as usize) < s, "{name}: stack {s}");
    }
    assert_trie(name, p);
    let n = p.samples.len();
    assert_eq!(p.samples.values.len(), n * p.value_types.len(), "{name}");
    for col in [&p.samples.thread, &p.samples.cpu, &p.samples.labels]
        .into_iter()
        .flatten()
    {
        assert_eq!(col.len(), n, "{name}");
    }
    if let Some(t) = &p.samples.time {
        assert_eq!(t.len(), n, "{name}");
    }
    assert!(
        p.samples
            .stack
            .iter()
            .all(|&s| s == u32::MAX || (s as usize) < p.stacks.len()),
        "{name}"
    );
    assert_eq!(p.frames.len(), before.frames.len(), "{name}");
    assert_eq!(p.value_types, before.value_types, "{name}");
    assert_eq!(p.default_value, before.default_value, "{name}");
    assert_eq!(p.format, before.format, "{name}");
}

#[test]
fn every_transform_matches_the_naive_model() {
    let mut checked = 0;
    for (name, p) in folded_profiles() {
        let paths = sample_paths(&p);
        for t in every_transform(&p) {
            let out = run(&p, &t);
            check_well_formed(&format!("{name}, {t}"), &p, &out);
            assert_eq!(folded(&out), naive_on(&paths, &t), "{name}: {t}");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// A small random profile: stacks over a few names, so that recursion (direct and
/// indirect), shared callees and repeated names at many depths are common, in
/// random order, with an empty stack now and then.
fn random_profile(seed: u64) -> Profile {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let names = ["a", "b", "c", "d", "e"];
    let mut p = Profile::new("test", vec![ValueType::samples()]);
    for _ in 0..1 + next(40) {
        let depth = next(9) as usize;
        let path: Vec<&str> = (0..depth).map(|_| names[next(5) as usize]).collect();
        let s = p.intern_path(path.iter().map(|n| n.as_bytes()));
        p.push_sample(s, &[1 + next(20) as i64]);
    }
    p
}

#[test]
fn random_profiles_match_the_naive_model() {
    for seed in 0..200 {
        let p = random_profile(seed);
        let paths = sample_paths(&p);
        let mut ts = structural_transforms(&p);
        ts.extend(
            ["^a$", "^(b|c)$", "d|e"]
                .iter()
                .flat_map(|re| [focus(re), drop_(re), merge(re)]),
        );
        ts.extend([10.0, 25.0, 60.0].map(|percent| Transform::MinWidth { percent }));
        // Hide every node, and a path that is not there.
        let mut nodes: Vec<Vec<String>> = paths
            .iter()
            .flat_map(|(path, _)| {
                (1..=path.len()).map(|k| path[..k].iter().map(|n| n.to_string()).collect())
            })
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes.push(vec!["a".into(), "z".into()]);
        ts.extend(nodes.into_iter().map(|path| Transform::Hide { path }));
        for t in ts {
            let out = run(&p, &t);
            check_well_formed(&format!("seed {seed}, {t}"), &p, &out);
            assert_eq!(folded(&out), naive_on(&paths, &t), "seed {seed}: {t}");
        }
    }
}

#[test]
fn merge_hide_collapse_and_min_width_keep_the_total() {
    for (name, p) in folded_profiles() {
        for t in every_transform(&p) {
            if matches!(t, Transform::Focus { .. } | Transform::Drop { .. }) {
                continue;
            }
            let out = run(&p, &t);
            assert_eq!(out.samples.len(), p.samples.len(), "{name}: {t}");
            for v in 0..p.value_types.len() {
                assert_eq!(out.total(v), p.total(v), "{name}: {t}");
            }
            // Through the call tree as well.
            let tree = common::default_tree(&out);
            assert_eq!(tree.total(tree.root()), p.total(p.default_value));
        }
    }
}

#[test]
fn focus_and_drop_on_one_pattern_partition_the_samples() {
    for (name, p) in folded_profiles() {
        let mut hits = 0;
        for re in PATTERNS {
            let kept = run(&p, &focus(re));
            let rest = run(&p, &drop_(re));
            assert_eq!(
                kept.samples.len() + rest.samples.len(),
                p.samples.len(),
                "{name}: {re}"
            );
            assert_eq!(kept.total(0) + rest.total(0), p.total(0), "{name}: {re}");
            if kept.total(0) > 0 && rest.total(0) > 0 {
                hits += 1;
            }
        }
        // Some pattern splits every profile in two.
        assert!(hits > 0, "{name}");
    }
}

#[test]
fn the_samples_exercise_the_transforms() {
    // Guard the test data: the patterns do match, and both kinds of recursion occur.
    let profiles = folded_profiles();
    let changed = |t: &Transform| {
        profiles
            .iter()
            .any(|(_, p)| folded_text(&run(p, t)) != folded_text(p))
    };
    assert!(changed(&Transform::CollapseRecursion { indirect: false }));
    assert!(changed(&Transform::CollapseRecursion { indirect: true }));
    assert!(changed(&merge("^_PyEval_EvalFrameDefault$")));
    assert!(changed(&merge("^Parser\\.parse_")));
    assert!(changed(&Transform::MinWidth { percent: 1.0 }));
}

#[test]
fn a_transform_that_matches_nothing_is_the_identity() {
    for (name, p) in folded_profiles() {
        let before = folded_text(&p);
        let nothing = "^no frame is called this$";
        let missing = Transform::Hide {
            path: vec!["no frame is called this".into()],
        };
        for t in [drop_(nothing), merge(nothing), missing] {
            let out = run(&p, &t);
            assert_eq!(folded_text(&out), before, "{name}: {t}");
            assert_eq!(out.stacks.len(), p.stacks.len(), "{name}: {t}");
        }
        assert_eq!(
            folded_text(&run(&p, &Transform::MinWidth { percent: 0.0 })),
            before,
            "{name}"
        );
        // Focus on nothing keeps nothing; focus on every root frame keeps all.
        assert_eq!(run(&p, &focus(nothing)).samples.len(), 0, "{name}");
        let roots: Vec<String> = folded(&p)
            .keys()
            .filter_map(|path| path.first())
            .map(|n| regex::escape(n))
            .collect();
        let all = focus(&format!("^({})$", roots.join("|")));
        assert_eq!(folded_text(&run(&p, &all)), before, "{name}");
    }
}

#[test]
fn transforms_compose_like_the_naive_model() {
    for (name, p) in folded_profiles() {
        let ts = [
            drop_("^\\[unknown\\]$"),
            merge("^_PyEval_(Vector|EvalFrame)$"),
            Transform::CollapseRecursion { indirect: true },
            Transform::MinWidth { percent: 0.5 },
        ];
        let out = apply_all(&p, &ts).unwrap();
        let mut step = p.clone();
        for t in &ts {
            step = run(&step, t);
        }
        assert_eq!(folded(&out), folded(&step), "{name}");
        // The naive model of the last step, on the result of the others.
        let before_last = apply_all(&p, &ts[..3]).unwrap();
        assert_eq!(folded(&out), naive(&before_last, &ts[3]), "{name}");
    }
}

#[test]
fn dropped_samples_leave_every_column() {
    // Give a real profile extra value, time, thread, CPU and label columns that
    // number the samples, then check that the survivors keep theirs.
    for (name, mut p) in folded_profiles() {
        let n = p.samples.len();
        let old_values = std::mem::take(&mut p.samples.values);
        p.value_types.push(ValueType::samples());
        for (i, &v) in old_values.iter().enumerate() {
            p.samples.values.extend([v, i as i64]);
        }
        p.samples.time = Some((0..n as u64).map(|i| 1000 + i).collect());
        p.samples.thread = Some((0..n as u32).collect());
        p.samples.cpu = Some((0..n as u32).map(|i| i * 2).collect());
        p.samples.labels = Some((0..n as u32).map(|i| i * 3).collect());
        for re in PATTERNS {
            for t in [focus(re), drop_(re)] {
                let out = run(&p, &t);
                check_well_formed(&format!("{name}, {t}"), &p, &out);
                let ids: Vec<u32> = out.samples.thread.clone().unwrap();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{name}: {t}");
                for (j, &i) in ids.iter().enumerate() {
                    let i = i as usize;
                    assert_eq!(out.samples.values[2 * j], old_values[i], "{name}: {t}");
                    assert_eq!(out.samples.values[2 * j + 1], i as i64, "{name}: {t}");
                    assert_eq!(out.samples.time.as_ref().unwrap()[j], 1000 + i as u64);
                    assert_eq!(out.samples.cpu.as_ref().unwrap()[j], 2 * i as u32);
                    assert_eq!(out.samples.labels.as_ref().unwrap()[j], 3 * i as u32);
                }
            }
        }
    }
}

#[test]
fn other_sample_formats_transform_too() {
    // pprof (several value types, labels), perf (time, thread, CPU), V8, speedscope.
    let mut loaded = 0;
    for entry in std::fs::read_dir(repo().join("samples")).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !path.is_file() || matches!(ext, "md" | "folded") {
            continue;
        }
        let Ok(p) = load_path(&path) else {
            continue; // loaders are tested elsewhere
        };
        loaded += 1;
        let name = short(&path);
        for t in every_transform(&p) {
            let out = run(&p, &t);
            check_well_formed(&format!("{name}, {t}"), &p, &out);
            if !matches!(t, Transform::Focus { .. } | Transform::Drop { .. }) {
                for v in 0..p.value_types.len() {
                    assert_eq!(out.total(v), p.total(v), "{name}: {t}");
                }
            }
            if let Transform::Focus { pattern } = &t {
                let rest = run(&p, &drop_(pattern));
                for v in 0..p.value_types.len() {
                    assert_eq!(out.total(v) + rest.total(v), p.total(v), "{name}: {t}");
                }
            }
        }
        // Collapsing and merging do not depend on which value type is shown.
        for t in [Transform::CollapseRecursion { indirect: true }, merge("e")] {
            assert_eq!(folded(&run(&p, &t)), naive(&p, &t), "{name}: {t}");
        }
    }
    eprintln!("{loaded} other sample files loaded");
}

#[test]
fn deep_stacks_need_no_recursion() {
    // One stack 20,000 frames deep that cycles through 500 functions.
    let mut p = Profile::new("test", vec![ValueType::samples()]);
    let names: Vec<String> = (0..20_000).map(|i| format!("f{}", i % 500)).collect();
    let leaf = p.intern_path(names.iter().map(|n| n.as_bytes()));
    p.push_sample(leaf, &[3]);
    let mid = p.intern_path(names[..10_250].iter().map(|n| n.as_bytes()));
    p.push_sample(mid, &[4]);
    for t in [
        Transform::CollapseRecursion { indirect: true },
        Transform::CollapseRecursion { indirect: false },
        merge("^f1"),
        focus("^f499$"),
    ] {
        let out = run(&p, &t);
        assert_eq!(folded(&out), naive(&p, &t), "{t}");
    }
    let out = run(&p, &Transform::CollapseRecursion { indirect: true });
    let depths: Vec<usize> = folded(&out).keys().map(Vec::len).collect();
    assert_eq!(depths, [250, 500]);
    // The deeper sample (3 of 7) is narrower than half: cut where the other ends.
    let out = run(&p, &Transform::MinWidth { percent: 50.0 });
    let want: Vec<Name> = names[..10_250]
        .iter()
        .map(|n| Name::from(n.as_str()))
        .collect();
    let want: Folded = [(want, 7)].into_iter().collect();
    assert_eq!(folded(&out), want);
}

fn temp_file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_recipe_round_trips_through_a_toml_file() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = Recipe {
        description: Some("quiet the interpreter \"loop\"".into()),
        search: Some("tokenize".into()),
        transforms: vec![
            drop_("^\\[unknown\\]$"),
            merge("^_PyEval_(Vector|EvalFrame)$"),
            focus("^(python3|<module>)"),
            Transform::Hide {
                path: vec!["python3.11".into(), "_start".into()],
            },
            Transform::CollapseRecursion { indirect: true },
            Transform::CollapseRecursion { indirect: false },
            Transform::MinWidth { percent: 0.25 },
        ],
        budgets: vec![ember::model::recipe::Budget {
            function: Some("^tokenize$".into()),
            max_increase: "5%".into(),
            metric: Some("total".into()),
        }],
    };
    let path = dir.path().join("view.toml");
    recipe.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, recipe.to_toml().unwrap());
    assert!(text.contains("[[transforms]]\nkind = \"drop\""), "{text}");
    let back = Recipe::load(&path).unwrap();
    assert_eq!(back, recipe);
    // And it does the same thing to a profile.
    for (name, p) in folded_profiles() {
        let a = back.apply(&p).unwrap();
        let b = apply_all(&p, &recipe.transforms).unwrap();
        assert_eq!(folded(&a), folded(&b), "{name}");
    }
}

#[test]
fn the_documented_recipe_format_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(
        &dir,
        "go.toml",
        r#"description = "hide the Go runtime noise"
search = "handler"
[[transforms]]
kind = "drop"
pattern = "^runtime\\.gc"
[[transforms]]
kind = "merge"
pattern = "^runtime\\.(mcall|systemstack)$"
"#,
    );
    let r = Recipe::load(&path).unwrap();
    assert_eq!(r.search.as_deref(), Some("handler"));
    assert_eq!(
        r.transforms
            .iter()
            .map(|t| t.describe())
            .collect::<Vec<_>>(),
        [
            "drop: ^runtime\\.gc",
            "merge: ^runtime\\.(mcall|systemstack)$"
        ]
    );
}

#[test]
fn a_recipe_with_a_bad_regex_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_file(
        &dir,
        "bad-regex.toml",
        "[[transforms]]\nkind = \"merge\"\npattern = \"fmt::(write\"\n",
    );
    let err = Recipe::load(&path).unwrap_err();
    assert!(
        matches!(
            &err,
            RecipeError::Transform {
                index: 1,
                source: TransformError::BadPattern { .. },
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains("fmt::(write"), "{msg}");
}

#[test]
fn a_recipe_with_bad_toml_names_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, line) in [
        ("syntax.toml", "description = \"x\"\n[[transforms]\n", 2),
        ("kind.toml", "[[transforms]]\nkind = \"squash\"\n", 2),
        ("value.toml", "search = 3\n", 1),
    ] {
        let path = temp_file(&dir, name, text);
        let err = Recipe::load(&path).unwrap_err();
        let RecipeError::Toml { line: l, .. } = &err else {
            panic!("{name}: {err:?}");
        };
        assert_eq!(*l, line, "{name}: {err}");
        let msg = err.to_string();
        let want = format!("{}:{line}:", path.display());
        assert!(msg.starts_with(&want), "{msg}");
    }
    // A missing file is an I/O error that names it.
    let missing = dir.path().join("missing.toml");
    let err = Recipe::load(&missing).unwrap_err();
    assert!(matches!(err, RecipeError::Io { .. }), "{err:?}");
    assert!(err.to_string().starts_with(&missing.display().to_string()));
}

/// `path count` per distinct path, each sample's path mapped by `f`, sorted.
fn naive_folded(p: &Profile, f: impl Fn(Vec<String>) -> Option<Vec<String>>) -> Vec<String> {
    let mut sums: BTreeMap<String, i64> = BTreeMap::new();
    let n = p.value_types.len();
    for i in 0..p.samples.len() {
        let Some(s) = p.samples.stack_of(i) else {
            continue;
        };
        let names = p
            .stacks
            .path(s)
            .iter()
            .map(|&fr| p.frames.name(fr).into_owned())
            .collect();
        if let Some(path) = f(names) {
            *sums.entry(path.join(";")).or_default() += p.samples.values[i * n + p.default_value];
        }
    }
    sums.into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect()
}

/// No two stacks of the table are the same (prefix, frame) pair.
fn assert_trie(name: &str, p: &Profile) {
    let pairs: HashSet<(u32, u32)> = p
        .stacks
        .prefixes()
        .iter()
        .zip(p.stacks.frames())
        .map(|(&pre, f)| (pre, f.0))
        .collect();
    assert_eq!(pairs.len(), p.stacks.len(), "{name}: duplicate stacks");
}

fn folded_of(p: &Profile) -> Vec<String> {
    naive_folded(p, Some)
}

#[test]
fn invert_and_callers_match_a_naive_reversal_of_every_sample() {
    use ember::model::{invert::invert, sandwich};
    for (name, p) in folded_profiles() {
        let inv = invert(&p);
        assert_trie(&name, &inv);
        let want = naive_folded(&p, |mut path| {
            path.reverse();
            Some(path)
        });
        assert_eq!(folded_of(&inv), want, "{name}: inverted");
        // Callers of the heaviest leaf frame: reversed from its innermost
        // occurrence, for the samples that have it.
        let tree = common::default_tree(&p);
        let table = common::top_table(&p, &tree);
        let Some(top) = table.rows.iter().max_by_key(|r| r.self_weight) else {
            continue;
        };
        let fname = p.frames.name(top.frame).into_owned();
        let callers = sandwich::callers(&p, top.frame);
        assert_trie(&name, &callers);
        let want = naive_folded(&p, |path| {
            let at = path.iter().rposition(|n| *n == fname)?;
            Some(path[..=at].iter().rev().cloned().collect())
        });
        assert_eq!(folded_of(&callers), want, "{name}: callers of {fname}");
    }
}

//! Search over frame names: fuzzy (nucleo, several words all must match) or regex,
//! and how much of the profile the matches cover.
//!
//! Matching runs once per distinct name, never per stack or per node, so a
//! keystroke costs one pass over the interner (100k names: see BENCHMARKS.md).

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::frames::{FrameId, Frames};
use super::profile::Profile;
use super::tree::{CallTree, NodeId};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    #[default]
    Fuzzy,
    Regex,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub text: String,
    pub mode: SearchMode,
    /// Case-sensitive; otherwise "smart" for fuzzy (case-sensitive only when the
    /// query has an upper-case letter) and insensitive for regex.
    pub case_sensitive: bool,
}

/// Which frames match a query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matches {
    /// Indexed by `FrameId`.
    pub frame: Vec<bool>,
    /// How many distinct names match.
    pub count: usize,
}

impl Matches {
    #[inline]
    pub fn is_match(&self, f: FrameId) -> bool {
        self.frame.get(f.0 as usize).copied().unwrap_or(false)
    }
}

/// A reusable matcher (nucleo's keeps scratch memory between calls). It remembers
/// the last fuzzy result: typing one more character can only narrow a fuzzy
/// match, so the next keystroke re-checks the survivors, not every name.
pub struct Searcher {
    matcher: Matcher,
    buf: Vec<char>,
    last: Option<(Query, usize, Matches)>,
}

impl Default for Searcher {
    fn default() -> Self {
        Searcher {
            matcher: Matcher::new(Config::DEFAULT),
            buf: Vec::new(),
            last: None,
        }
    }
}

impl Searcher {
    /// The frames matching `q`; an invalid regex is an error for the user to fix.
    pub fn run(&mut self, frames: &Frames, q: &Query) -> Result<Matches, String> {
        let n = frames.len();
        let mut out = Matches {
            frame: vec![false; n],
            count: 0,
        };
        if q.text.trim().is_empty() {
            self.last = None;
            return Ok(out);
        }
        match q.mode {
            SearchMode::Fuzzy => {
                let case = if q.case_sensitive {
                    CaseMatching::Respect
                } else {
                    CaseMatching::Smart
                };
                let pattern = Pattern::new(&q.text, case, Normalization::Smart, AtomKind::Fuzzy);
                // Smart case turns sensitive at the first capital: then the last
                // result is no superset and everything is checked again.
                let narrowing = self.last.as_ref().filter(|(lq, len, _)| {
                    *len == n
                        && lq.mode == SearchMode::Fuzzy
                        && lq.case_sensitive == q.case_sensitive
                        && !lq.text.trim().is_empty()
                        && q.text.starts_with(&lq.text)
                        && (q.case_sensitive
                            || !q.text[lq.text.len()..].chars().any(char::is_uppercase))
                });
                let candidates: Vec<FrameId> = match narrowing {
                    Some((_, _, m)) => frames.ids().filter(|&f| m.is_match(f)).collect(),
                    None => frames.ids().collect(),
                };
                for id in candidates {
                    let name = frames.name(id);
                    let hay = Utf32Str::new(&name, &mut self.buf);
                    if pattern.score(hay, &mut self.matcher).is_some() {
                        out.frame[id.0 as usize] = true;
                        out.count += 1;
                    }
                }
                self.last = Some((q.clone(), n, out.clone()));
                return Ok(out);
            }
            SearchMode::Regex => {
                self.last = None;
                let re = regex::RegexBuilder::new(&q.text)
                    .case_insensitive(!q.case_sensitive)
                    .size_limit(1 << 22)
                    .build()
                    .map_err(|e| e.to_string())?;
                for id in frames.ids() {
                    if re.is_match(&frames.name(id)) {
                        out.frame[id.0 as usize] = true;
                        out.count += 1;
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The weight of samples with at least one matching frame (each sample counted
/// once however many of its frames match): over the whole tree, and within the
/// subtree of `zoom`.
pub fn coverage(profile: &Profile, tree: &CallTree, m: &Matches, zoom: NodeId) -> (i64, i64) {
    // Parents have smaller ids, so one ascending pass settles "covered".
    let n = tree.len();
    let mut covered = vec![false; n];
    let mut all = 0;
    for i in 1..n {
        let node = NodeId(i as u32);
        let parent = tree.parent(profile, node).unwrap_or(NodeId::ROOT);
        let hit =
            covered[parent.0 as usize] || tree.frame(profile, node).is_some_and(|f| m.is_match(f));
        covered[i] = hit;
        if hit {
            all += tree.self_weight(node);
        }
    }
    let in_zoom = if zoom == NodeId::ROOT {
        all
    } else {
        // The zoomed subtree, walked from its root.
        let mut sum = 0;
        let mut stack = vec![zoom];
        while let Some(x) = stack.pop() {
            if covered[x.0 as usize] {
                sum += tree.self_weight(x);
            }
            stack.extend(tree.child_ids(x));
        }
        sum
    };
    (all, in_zoom)
}

/// Matching nodes under `root` in drawing order (depth first, children as drawn).
pub fn matching_nodes(
    profile: &Profile,
    tree: &CallTree,
    m: &Matches,
    root: NodeId,
) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(x) = stack.pop() {
        if tree.frame(profile, x).is_some_and(|f| m.is_match(f)) && tree.total(x) != 0 {
            out.push(x);
        }
        stack.extend(tree.child_ids(x).rev());
    }
    out
}

/// The next (or previous) matching node after `from` in drawing order under
/// `root`, wrapping around.
pub fn step_match(
    profile: &Profile,
    tree: &CallTree,
    m: &Matches,
    root: NodeId,
    from: NodeId,
    forward: bool,
) -> Option<NodeId> {
    let mut before: Option<NodeId> = None; // last match before `from`
    let mut first: Option<NodeId> = None;
    let mut last: Option<NodeId> = None;
    let mut seen_from = false;
    let mut stack = vec![root];
    while let Some(x) = stack.pop() {
        if x == from {
            seen_from = true;
        } else if tree.frame(profile, x).is_some_and(|f| m.is_match(f)) && tree.total(x) != 0 {
            if forward && seen_from {
                return Some(x);
            }
            if !seen_from {
                before = Some(x);
            }
            first = first.or(Some(x));
            last = Some(x);
        }
        stack.extend(tree.child_ids(x).rev());
    }
    if forward { first } else { before.or(last) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{TreeOptions, ValueType};

    fn profile() -> Profile {
        let mut p = Profile::new("test", vec![ValueType::samples()]);
        for (path, w) in [
            (&["main", "parse_json", "alloc"][..], 5),
            (&["main", "render", "alloc"][..], 3),
            (&["main", "render"][..], 2),
            (&["main", "HashMap::insert"][..], 4),
        ] {
            let s = p.intern_path(path.iter().map(|n| n.as_bytes()));
            p.push_sample(s, &[w]);
        }
        p
    }

    #[test]
    fn fuzzy_matches_every_word_and_regex_errors_are_values() {
        let p = profile();
        let mut s = Searcher::default();
        let q = |text: &str, mode| Query {
            text: text.into(),
            mode,
            case_sensitive: false,
        };
        let m = s
            .run(&p.frames, &q("prsjsn", SearchMode::Fuzzy))
            .unwrap_or_default();
        assert_eq!(m.count, 1);
        assert!(m.is_match(p.frames.get(b"parse_json").unwrap_or(FrameId(99))));
        let m = s
            .run(&p.frames, &q("hash insert", SearchMode::Fuzzy))
            .unwrap_or_default();
        assert_eq!(m.count, 1);
        let m = s
            .run(&p.frames, &q("^(render|alloc)$", SearchMode::Regex))
            .unwrap_or_default();
        assert_eq!(m.count, 2);
        assert!(s.run(&p.frames, &q("(", SearchMode::Regex)).is_err());
        assert_eq!(
            s.run(&p.frames, &q("  ", SearchMode::Fuzzy))
                .map(|m| m.count),
            Ok(0)
        );
    }

    #[test]
    fn typing_ahead_narrows_like_a_fresh_search() {
        let p = profile();
        let mut typed = Searcher::default();
        for text in ["r", "re", "ren", "rend", "rendr", "ren", "r"] {
            let q = Query {
                text: text.into(),
                mode: SearchMode::Fuzzy,
                case_sensitive: false,
            };
            let fresh = Searcher::default().run(&p.frames, &q);
            assert_eq!(typed.run(&p.frames, &q), fresh, "{text}");
        }
        // Smart case: a capital makes the query case-sensitive, not narrower.
        for text in ["h", "hM", "hMa"] {
            let q = Query {
                text: text.into(),
                mode: SearchMode::Fuzzy,
                case_sensitive: false,
            };
            let fresh = Searcher::default().run(&p.frames, &q);
            assert_eq!(typed.run(&p.frames, &q), fresh, "{text}");
        }
    }

    #[test]
    fn coverage_counts_each_sample_once() {
        let p = profile();
        let tree = CallTree::build(&p, TreeOptions::default());
        let mut s = Searcher::default();
        // "render" and "alloc" both match the 3 samples of main;render;alloc.
        let q = Query {
            text: "^(render|alloc)$".into(),
            mode: SearchMode::Regex,
            case_sensitive: false,
        };
        let m = s.run(&p.frames, &q).unwrap_or_default();
        let (all, zoom) = coverage(&p, &tree, &m, NodeId::ROOT);
        assert_eq!((all, zoom), (10, 10));
        let render = tree
            .find_path(
                &p,
                &[
                    p.frames.get(b"main").unwrap_or(FrameId(0)),
                    p.frames.get(b"render").unwrap_or(FrameId(0)),
                ],
            )
            .0;
        assert_eq!(coverage(&p, &tree, &m, render), (10, 5));
        let nodes = matching_nodes(&p, &tree, &m, NodeId::ROOT);
        assert_eq!(nodes.len(), 3); // parse_json;alloc, render, render;alloc
        let next = step_match(&p, &tree, &m, NodeId::ROOT, nodes[0], true);
        assert_eq!(next, Some(nodes[1]));
        let wrap = step_match(&p, &tree, &m, NodeId::ROOT, nodes[2], true);
        assert_eq!(wrap, Some(nodes[0]));
        let back = step_match(&p, &tree, &m, NodeId::ROOT, nodes[0], false);
        assert_eq!(back, Some(nodes[2]));
        let from_root = step_match(&p, &tree, &m, NodeId::ROOT, NodeId::ROOT, true);
        assert_eq!(from_root, Some(nodes[0]));
    }
}

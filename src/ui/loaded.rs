//! A loaded profile and everything shown of it: the tree, the flame and table
//! state, the transforms with the untransformed base, the inverted view kept
//! aside, an open sandwich.

use std::sync::Arc;
use std::time::Duration;

use crate::model::{CallTree, NodeId, Profile, Transform, TransformError, TreeOptions};
use crate::ui::views::flame_state::{FlameState, Orientation};
use crate::ui::views::sandwich::Sandwich;
use crate::ui::views::table::TableState;

/// A profile, its tree and the place in it: the orientation not on screen
/// (inverted or top-down), kept for the swap.
pub(super) type OtherView = (Arc<Profile>, Arc<CallTree>, FlameState);

/// Which linked pane a tree is for: the Loaded id, inverted or not, the
/// active value.
pub type PairKey = (u64, bool, usize);

/// A profile ready to explore.
pub struct Loaded {
    /// The profile on screen: `base` with `transforms` applied. Shared, so a
    /// job thread gets it without a copy.
    pub profile: Arc<Profile>,
    /// Shared too: the function table's job reads it (`Arc::make_mut`
    /// before a change, which copies only while that job holds it).
    pub tree: Arc<CallTree>,
    pub flame: FlameState,
    pub table: TableState,
    pub load_time: Duration,
    /// The profile as loaded, kept while transforms are active (for undo).
    pub base: Option<Arc<Profile>>,
    /// Transforms applied to `base`, oldest first.
    pub transforms: Vec<Transform>,
    /// The last transform that failed (a bad pattern), for the status line.
    pub transform_error: Option<String>,
    /// Whether `profile`, `tree` and `flame` hold the inverted (bottom-up) view;
    /// `alt` then holds the top-down ones, and the other way round.
    pub inverted: bool,
    pub(super) alt: Option<Box<OtherView>>,
    /// Changes whenever the profile or tree does: a job's result is installed
    /// only into the view it was made for.
    pub id: u64,
    /// The callers / callees of one function, while that view is showing.
    pub sandwich: Option<Box<Sandwich>>,
    /// The delta table, when the profile is a comparison.
    pub delta: crate::ui::views::diff::DeltaState,
    /// The other side's pane of the linked before | after view.
    pub pair: Option<Box<PairPane>>,
    /// The key of a `pair` tree being built on the job thread: the pane says
    /// so instead of building it on the draw thread.
    pub pair_asked: Option<PairKey>,
    /// The profile lint of view `.0` (an id), worked out where the tree was
    /// built (a loader or job thread) so the draw thread need not.
    pub lint: Option<(u64, Vec<crate::model::lint::Finding>)>,
}

/// The profile, tree and view state that keys and panels act on.
pub struct Shown<'a> {
    pub profile: &'a Profile,
    pub tree: &'a CallTree,
    pub flame: &'a FlameState,
    /// What "% of all" divides by: the whole profile, also in a sandwich pane.
    pub all: i64,
}

impl Loaded {
    /// The one way a profile becomes what the viewer shows: its tree for
    /// `options` (the value type, the order), built here, and the view state
    /// around it. The first load, live reloads and the jobs all come here; what
    /// each applies then (transforms, a time range) is theirs.
    pub fn build(
        profile: impl Into<Arc<Profile>>,
        options: TreeOptions,
        orientation: Orientation,
        started: std::time::Instant,
    ) -> Loaded {
        let profile: Arc<Profile> = profile.into();
        let tree = CallTree::build(&profile, options);
        Loaded::new(profile, tree, orientation, started.elapsed())
    }

    /// The options a fresh view of `profile` starts from: its default value.
    pub fn default_options(profile: &Profile) -> TreeOptions {
        TreeOptions {
            value: profile.default_value,
            ..TreeOptions::default()
        }
    }

    pub fn new(
        profile: impl Into<Arc<Profile>>,
        tree: CallTree,
        orientation: Orientation,
        load_time: Duration,
    ) -> Loaded {
        Loaded {
            profile: profile.into(),
            tree: Arc::new(tree),
            flame: FlameState::new(orientation),
            table: TableState::new(),
            load_time,
            base: None,
            transforms: Vec::new(),
            transform_error: None,
            inverted: false,
            alt: None,
            sandwich: None,
            delta: crate::ui::views::diff::DeltaState::default(),
            pair: None,
            pair_asked: None,
            lint: None,
            id: next_id(),
        }
    }

    /// What is on screen: the active sandwich pane while there is one, else the
    /// flame or inverted view.
    pub fn shown(&self) -> Shown<'_> {
        match &self.sandwich {
            Some(sw) => {
                let p = sw.pane();
                Shown {
                    profile: &p.profile,
                    tree: &p.tree,
                    flame: &p.flame,
                    all: sw.all,
                }
            }
            None => Shown {
                profile: &self.profile,
                tree: &self.tree,
                flame: &self.flame,
                all: self.tree.total(NodeId::ROOT),
            },
        }
    }

    /// Shows the inverted (bottom-up) tree or the normal one. The inverted
    /// profile is built on first use and kept until the profile changes.
    pub fn set_inverted(&mut self, on: bool) {
        if on == self.inverted {
            return;
        }
        let alt = self.alt.take().unwrap_or_else(|| {
            let inv = crate::model::invert::invert(&self.profile);
            let tree = CallTree::build(&inv, self.tree.options.clone());
            let flame = FlameState::new(self.flame.orientation);
            Box::new((Arc::new(inv), Arc::new(tree), flame))
        });
        let (profile, tree, mut flame) = *alt;
        flame.orientation = self.flame.orientation;
        let old = (
            std::mem::replace(&mut self.profile, profile),
            std::mem::replace(&mut self.tree, tree),
            std::mem::replace(&mut self.flame, flame),
        );
        self.alt = Some(Box::new(old));
        self.inverted = on;
        self.table = TableState::new();
    }

    /// Applies the transforms to a freshly loaded profile (on the loader thread).
    pub fn with_transforms(mut self, transforms: Vec<Transform>) -> Result<Loaded, TransformError> {
        self.apply_transforms(transforms)?;
        Ok(self)
    }

    /// Applies transforms to a profile that has none yet; unchanged on error.
    pub fn apply_transforms(&mut self, transforms: Vec<Transform>) -> Result<(), TransformError> {
        if !transforms.is_empty() {
            let shown = crate::model::apply_all(&self.profile, &transforms)?;
            self.base = Some(std::mem::replace(&mut self.profile, Arc::new(shown)));
            self.transforms = transforms;
            self.rebuild(None);
        }
        Ok(())
    }

    /// Rebuilds the tree after the profile changed, re-finding the view's place.
    fn rebuild(&mut self, place: Option<crate::ui::views::flame_state::SavedPlace>) {
        let options = TreeOptions {
            value: self
                .tree
                .options
                .value
                .min(self.profile.value_types.len().saturating_sub(1)),
            ..self.tree.options.clone()
        };
        let tree = CallTree::build(&self.profile, options);
        self.set_tree(tree, place);
    }

    /// Shows a new tree of `profile`, re-finding the view's place in it.
    pub(super) fn set_tree(
        &mut self,
        tree: CallTree,
        place: Option<crate::ui::views::flame_state::SavedPlace>,
    ) {
        self.tree = Arc::new(tree);
        self.id = next_id();
        self.table = TableState::new();
        self.delta = crate::ui::views::diff::DeltaState::default();
        self.alt = None;
        self.sandwich = None;
        match place {
            Some(p) => self.flame.restore(&self.tree, &self.profile, &p),
            None => self.flame.after_rebuild(&self.tree, &self.profile),
        }
    }

    /// The profile as loaded, before transforms, time range and inversion:
    /// what the timeline draws.
    pub fn loaded_profile(&self) -> &Arc<Profile> {
        if let Some(b) = &self.base {
            return b;
        }
        match &self.alt {
            Some(alt) if self.inverted => &alt.0,
            _ => &self.profile,
        }
    }

    /// The active time range's window, if any.
    pub fn time_window(&self) -> Option<crate::model::timerange::Window> {
        self.transforms.iter().find_map(|t| match t {
            Transform::TimeRange { keep, .. } => *keep,
            _ => None,
        })
    }

    /// "focus: main › drop: ^runtime" for the header; a time range as its
    /// window from the first sample ("time 1.000-3.000 s").
    pub fn transform_breadcrumb(&self) -> String {
        let timed = self
            .transforms
            .iter()
            .any(|t| matches!(t, Transform::TimeRange { .. }));
        let first = timed
            .then(|| crate::model::timerange::sample_span(self.loaded_profile()))
            .flatten()
            .map_or(0, |s| s.0);
        self.transforms
            .iter()
            .map(|t| match t {
                Transform::TimeRange { keep, exclude } => {
                    let filter = crate::model::timerange::TimeFilter {
                        keep: *keep,
                        exclude: exclude.clone(),
                    };
                    format!("time {}", crate::model::timerange::describe(&filter, first))
                }
                other => other.describe(),
            })
            .collect::<Vec<_>>()
            .join(" › ")
    }
}

/// A fresh [`Loaded::id`].
fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The other side's pane of the linked view: its tree and a flame state that
/// mirrors the active one.
pub struct PairPane {
    /// What it was built for: the Loaded id, inverted or not, the active value.
    pub(super) key: PairKey,
    pub tree: CallTree,
    pub flame: crate::ui::views::flame_state::FlameState,
}

/// The deepest node along `n`'s path (itself included) that `tree` shows.
pub fn live_ancestor(tree: &CallTree, p: &Profile, mut n: NodeId) -> NodeId {
    while n != NodeId::ROOT && tree.total(n) == 0 {
        n = tree.parent(p, n).unwrap_or(NodeId::ROOT);
    }
    n
}

impl Loaded {
    /// What the other side's pane is built for (the view id, inverted or
    /// not, the active value) and the options of its tree; `None` when the
    /// profile is no comparison.
    pub(super) fn pair_wanted(&self) -> Option<(PairKey, crate::model::TreeOptions)> {
        let meta = self.profile.meta.diff.as_deref()?;
        let side = meta.side_of(self.tree.options.value)?;
        let key = (self.id, self.inverted, self.tree.options.value);
        let options = crate::model::TreeOptions {
            value: meta.sides[1 - side].value,
            one_side: true,
            ..self.tree.options.clone()
        };
        Some((key, options))
    }

    /// A pane tree from the job thread: kept when the view is still the one
    /// it was built for.
    pub(super) fn install_pair(&mut self, key: PairKey, tree: CallTree) -> bool {
        if self.pair_asked == Some(key) {
            self.pair_asked = None;
        }
        if self.pair_wanted().is_none_or(|(want, _)| want != key) {
            return false;
        }
        self.pair = Some(Box::new(PairPane {
            key,
            tree,
            flame: crate::ui::views::flame_state::FlameState::new(self.flame.orientation),
        }));
        true
    }

    /// The linked view's pane for the other side, linked to this side's
    /// place. Built here when the view changed and no job is building it
    /// (tests, a view without a job thread); `None` while one is.
    pub(super) fn ensure_pair(&mut self) -> Option<&mut PairPane> {
        let l = self;
        let (key, options) = l.pair_wanted()?;
        if l.pair.as_ref().is_none_or(|p| p.key != key) {
            if l.pair_asked == Some(key) {
                return None;
            }
            let tree = CallTree::build(&l.profile, options);
            l.pair = Some(Box::new(PairPane {
                key,
                tree,
                flame: crate::ui::views::flame_state::FlameState::new(l.flame.orientation),
            }));
        }
        let pane = l.pair.as_deref_mut()?;
        if pane.tree.options.order != l.tree.options.order {
            pane.tree.set_order(&l.profile, l.tree.options.order);
        }
        // Linked by node id, which is the frame path: the same place on both sides.
        let (main, p) = (&l.flame, &l.profile);
        pane.flame.orientation = main.orientation;
        pane.flame.zoom = live_ancestor(&pane.tree, p, main.zoom);
        pane.flame.selected = live_ancestor(&pane.tree, p, main.selected);
        pane.flame.scroll = main.scroll;
        Some(pane)
    }
}

//! The flame view's state: zoom, selection, history, scroll, and the layout of the
//! last frame drawn (which navigation uses, so keys move between visible frames).
//! Holds node ids for speed and can save them as frame paths to survive a rebuild.

use std::collections::HashMap;

use crate::model::{CallTree, FrameId, NodeId, Profile};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Orientation {
    /// Root on top, callees below.
    #[default]
    Icicle,
    /// Root at the bottom, callees above.
    Flame,
}

/// One frame as drawn: its row depth (relative to the zoom root) and columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlameHit {
    pub node: NodeId,
    pub depth: usize,
    pub x0: u16,
    pub x1: u16,
}

#[derive(Clone, Debug, Default)]
pub struct FlameState {
    pub zoom: NodeId,
    pub selected: NodeId,
    /// Earlier zoom roots, most recent last.
    pub history: Vec<NodeId>,
    pub orientation: Orientation,
    /// First depth (relative to the zoom root) on screen.
    pub scroll: usize,
    /// Rows the graph had when last drawn.
    pub rows: usize,
    /// Frames drawn last time, for navigation and mouse hits.
    pub layout: Vec<FlameHit>,
    /// Column offset of the graph area, for mouse hits.
    pub origin: (u16, u16),
    /// Whether the last draw had frames deeper than the screen.
    pub more_below: bool,
    /// Which child "down" returns to, per parent.
    last_child: HashMap<NodeId, NodeId>,
    /// Plateaus of the zoomed subtree by self weight, and where `w` is in them.
    plateaus: Option<(NodeId, Vec<NodeId>)>,
    plateau_pos: usize,
}

/// A path of frame names from the root. Names, not ids: a reloaded profile interns
/// its frames afresh, in whatever order the new input has them.
pub type NamePath = Vec<Vec<u8>>;

/// The view's place as name paths, which a rebuilt or reloaded tree can re-find.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SavedPlace {
    pub zoom: NamePath,
    pub selected: NamePath,
    pub history: Vec<NamePath>,
}

fn name_path(tree: &CallTree, p: &Profile, n: NodeId) -> NamePath {
    tree.frame_path(p, n)
        .into_iter()
        .map(|f| p.frames.raw(f).to_vec())
        .collect()
}

/// The node of `tree` at `path`. When the whole path is not there, the longest
/// suffix of it that is (a focus re-roots stacks, so `main;render` becomes
/// `render`), else the deepest node along the path.
fn find_names(tree: &CallTree, p: &Profile, path: &NamePath) -> NodeId {
    let ids: Vec<Option<FrameId>> = path.iter().map(|n| p.frames.get(n)).collect();
    let walk = |from: usize| {
        let known: Vec<FrameId> = ids[from..].iter().map_while(|f| *f).collect();
        let (node, found) = tree.find_path(p, &known);
        (node, found == ids.len() - from)
    };
    let (deepest, whole) = walk(0);
    if whole {
        return deepest;
    }
    (1..ids.len())
        .map(walk)
        .find(|(_, whole)| *whole)
        .map_or(deepest, |(n, _)| n)
}

impl FlameState {
    pub fn new(orientation: Orientation) -> Self {
        FlameState {
            orientation,
            rows: 20,
            ..FlameState::default()
        }
    }

    fn depth_in_view(&self, tree: &CallTree, p: &Profile, n: NodeId) -> usize {
        tree.depth(p, n).saturating_sub(tree.depth(p, self.zoom))
    }

    /// Scrolls so the selection is on screen.
    pub fn ensure_visible(&mut self, tree: &CallTree, p: &Profile) {
        let d = self.depth_in_view(tree, p, self.selected);
        let rows = self.rows.max(1);
        if d < self.scroll {
            self.scroll = d;
        } else if d >= self.scroll + rows {
            self.scroll = d + 1 - rows;
        }
    }

    pub fn select(&mut self, tree: &CallTree, p: &Profile, n: NodeId) {
        self.selected = n;
        self.ensure_visible(tree, p);
    }

    /// To the parent, never above the zoom root.
    pub fn to_parent(&mut self, tree: &CallTree, p: &Profile) {
        if self.selected == self.zoom {
            return;
        }
        if let Some(parent) = tree.parent(p, self.selected) {
            self.last_child.insert(parent, self.selected);
            self.select(tree, p, parent);
        }
    }

    /// To the child visited last from here, else the heaviest child.
    pub fn to_child(&mut self, tree: &CallTree, p: &Profile) {
        let cur = self.selected;
        let remembered = self
            .last_child
            .get(&cur)
            .copied()
            .filter(|&c| tree.child_ids(cur).any(|k| k == c) && tree.total(c) != 0);
        let next = remembered.or_else(|| {
            tree.child_ids(cur)
                .max_by_key(|&c| (tree.total(c), std::cmp::Reverse(c)))
        });
        if let Some(c) = next {
            self.select(tree, p, c);
        }
    }

    /// Up and down on screen, which depend on the orientation.
    pub fn move_vertical(&mut self, tree: &CallTree, p: &Profile, up: bool) {
        let toward_root = up == (self.orientation == Orientation::Icicle);
        if toward_root {
            self.to_parent(tree, p);
        } else {
            self.to_child(tree, p);
        }
    }

    /// To the frame drawn next to the selection on its row.
    pub fn move_horizontal(&mut self, tree: &CallTree, p: &Profile, right: bool) {
        let Some(cur) = self
            .layout
            .iter()
            .find(|h| h.node == self.selected)
            .copied()
        else {
            self.move_sibling(tree, p, right);
            return;
        };
        let same_row = self
            .layout
            .iter()
            .filter(|h| h.depth == cur.depth && h.node != cur.node);
        let next = if right {
            same_row.filter(|h| h.x0 >= cur.x1).min_by_key(|h| h.x0)
        } else {
            same_row.filter(|h| h.x1 <= cur.x0).max_by_key(|h| h.x1)
        };
        if let Some(h) = next {
            self.select(tree, p, h.node);
        }
    }

    /// Sibling order when the selection is not on screen.
    fn move_sibling(&mut self, tree: &CallTree, p: &Profile, right: bool) {
        if self.selected == self.zoom {
            return;
        }
        let Some(parent) = tree.parent(p, self.selected) else {
            return;
        };
        if let Some(i) = tree.child_ids(parent).position(|c| c == self.selected) {
            let j = if right {
                i.checked_add(1)
            } else {
                i.checked_sub(1)
            };
            if let Some(s) = j.and_then(|j| tree.child_ids(parent).nth(j)) {
                self.select(tree, p, s);
            }
        }
    }

    pub fn page(&mut self, tree: &CallTree, p: &Profile, down: bool) {
        for _ in 0..(self.rows / 2).max(1) {
            self.move_vertical(tree, p, !down);
        }
    }

    pub fn zoom_in(&mut self, tree: &CallTree, p: &Profile) {
        if self.selected != self.zoom && tree.total(self.selected) != 0 {
            self.history.push(self.zoom);
            self.zoom = self.selected;
            self.scroll = 0;
            self.ensure_visible(tree, p);
        }
    }

    /// Back one step in the zoom history (or to the root when there is none).
    pub fn zoom_out(&mut self, tree: &CallTree, p: &Profile) {
        let prev = self.history.pop().unwrap_or(NodeId::ROOT);
        if prev != self.zoom {
            self.zoom = prev;
            self.scroll = 0;
            self.ensure_visible(tree, p);
        }
    }

    pub fn reset(&mut self, tree: &CallTree, p: &Profile) {
        self.history.clear();
        self.zoom = NodeId::ROOT;
        self.scroll = 0;
        self.ensure_visible(tree, p);
    }

    /// The next (or previous) widest plateau, the frames with most self weight in
    /// the zoomed subtree, heaviest first.
    pub fn widest(&mut self, tree: &CallTree, p: &Profile, forward: bool) {
        let stale = self.plateaus.as_ref().is_none_or(|(z, _)| *z != self.zoom);
        if stale {
            self.plateaus = Some((self.zoom, plateaus(tree, self.zoom, 200)));
            self.plateau_pos = usize::MAX;
        }
        let Some((_, list)) = &self.plateaus else {
            return;
        };
        if list.is_empty() {
            return;
        }
        self.plateau_pos = match (self.plateau_pos, forward) {
            (usize::MAX, _) => 0,
            (i, true) => (i + 1) % list.len(),
            (i, false) => (i + list.len() - 1) % list.len(),
        };
        let n = list[self.plateau_pos];
        self.select(tree, p, n);
    }

    /// The frame at a screen cell, from the last layout.
    pub fn hit(&self, col: u16, row: u16) -> Option<NodeId> {
        let (ox, oy) = self.origin;
        let (col, row) = (col.checked_sub(ox)?, usize::from(row.checked_sub(oy)?));
        if row >= self.rows {
            return None;
        }
        let depth = match self.orientation {
            Orientation::Icicle => self.scroll + row,
            Orientation::Flame => self.scroll + (self.rows - 1 - row),
        };
        self.layout
            .iter()
            .find(|h| h.depth == depth && h.x0 <= col && col < h.x1)
            .map(|h| h.node)
    }

    /// Wheel scrolling moves the view, not the selection.
    pub fn scroll_by(&mut self, delta: isize) {
        if delta < 0 || self.more_below {
            self.scroll = self.scroll.saturating_add_signed(delta);
        }
    }

    /// After a rebuild over the same stack table (another value type, another
    /// sample range): node ids still hold, but a node may have lost its weight.
    pub fn after_rebuild(&mut self, tree: &CallTree, p: &Profile) {
        let live = |n: NodeId| n == NodeId::ROOT || tree.total(n) != 0;
        let up = |mut n: NodeId| {
            while !live(n) {
                n = tree.parent(p, n).unwrap_or(NodeId::ROOT);
            }
            n
        };
        self.zoom = up(self.zoom);
        self.history = self.history.iter().map(|&h| up(h)).collect();
        self.selected = up(self.selected);
        if !tree.is_ancestor_or_self(p, self.zoom, self.selected) {
            self.selected = self.zoom;
        }
        self.last_child.clear();
        self.plateaus = None;
        self.ensure_visible(tree, p);
    }

    pub fn save(&self, tree: &CallTree, p: &Profile) -> SavedPlace {
        SavedPlace {
            zoom: name_path(tree, p, self.zoom),
            selected: name_path(tree, p, self.selected),
            history: self
                .history
                .iter()
                .map(|&n| name_path(tree, p, n))
                .collect(),
        }
    }

    /// Re-finds a saved place in a new tree: each node becomes the deepest frame
    /// of its path that still exists.
    pub fn restore(&mut self, tree: &CallTree, p: &Profile, place: &SavedPlace) {
        let zoom = find_names(tree, p, &place.zoom);
        let history = place
            .history
            .iter()
            .map(|h| find_names(tree, p, h))
            .collect();
        let sel = find_names(tree, p, &place.selected);
        self.place_at(tree, p, zoom, sel, history);
    }

    /// Zooms to `zoom` and selects `sel` (the zoom itself when `sel` is not
    /// below it) in a new tree, with `history` as the unzoom steps.
    pub fn place_at(
        &mut self,
        tree: &CallTree,
        p: &Profile,
        zoom: NodeId,
        sel: NodeId,
        history: Vec<NodeId>,
    ) {
        self.zoom = zoom;
        self.history = history;
        self.selected = if tree.is_ancestor_or_self(p, self.zoom, sel) {
            sel
        } else {
            self.zoom
        };
        self.layout.clear();
        self.last_child.clear();
        self.plateaus = None;
        self.ensure_visible(tree, p);
    }
}

/// The `k` nodes under `root` with the largest self weight, heaviest first.
fn plateaus(tree: &CallTree, root: NodeId, k: usize) -> Vec<NodeId> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap: BinaryHeap<Reverse<(i64, Reverse<NodeId>)>> = BinaryHeap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let w = tree.self_weight(n);
        if w > 0 && n != NodeId::ROOT {
            heap.push(Reverse((w, Reverse(n))));
            if heap.len() > k {
                heap.pop();
            }
        }
        stack.extend(tree.child_ids(n));
    }
    let mut out: Vec<(i64, NodeId)> = heap
        .into_iter()
        .map(|Reverse((w, Reverse(n)))| (w, n))
        .collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(_, n)| n).collect()
}

//! speedscope's walk over a `.cpuprofile`'s samples: which nodes are open, and the
//! ember stack of each, interned as few times as possible.

use super::super::Out;
use super::{NONE, Role, Table};
use crate::model::StackId;

/// speedscope's stack state: the nodes open, and their ember stacks.
pub(super) struct Walk {
    open: Vec<(u32, StackId)>,
    /// Position + 1 of a node in `open`, 0 if not open.
    pos: Vec<u32>,
    to_open: Vec<u32>,
    /// The (prefix, stack) a node was last opened with: a node nearly always
    /// opens on the same prefix, so this spares the stack table's hash probe.
    last: Vec<(u32, StackId)>,
    /// `Some(x)`: what is open is plain node `x` and its ancestry, not written
    /// out in `open` (which is then empty).
    lazy: Option<u32>,
    /// The stack of each plain node, once asked for.
    plain_stack: Vec<u32>,
    chain: Vec<u32>,
}

impl Walk {
    /// Nothing open, for a table of `nodes` nodes.
    pub(super) fn new(nodes: usize) -> Walk {
        Walk {
            open: Vec::new(),
            pos: vec![0; nodes],
            to_open: Vec::new(),
            last: vec![(u32::MAX, StackId(u32::MAX)); nodes],
            lazy: None,
            plain_stack: vec![NONE; nodes],
            chain: Vec::new(),
        }
    }

    /// The stack of plain node `x`: its ancestry, interned once per node.
    pub(super) fn plain(&mut self, out: &mut Out, t: &Table, x: u32) -> StackId {
        if self.plain_stack[x as usize] != NONE {
            return StackId(self.plain_stack[x as usize]);
        }
        let mut base = None;
        let mut n = x;
        loop {
            let i = n as usize;
            if self.plain_stack[i] != NONE {
                base = Some(StackId(self.plain_stack[i]));
                break;
            }
            self.chain.push(n);
            let p = t.parent[i];
            if p == NONE || t.role[p as usize] != Role::Normal {
                break;
            }
            n = p;
        }
        while let Some(n) = self.chain.pop() {
            let s = out.profile.stacks.intern(base, t.frame[n as usize]);
            self.plain_stack[n as usize] = s.0;
            base = Some(s);
        }
        base.unwrap_or(StackId(0))
    }

    /// Samples plain node `x`: its ancestry is what is open now.
    pub(super) fn open_plain(&mut self, out: &mut Out, t: &Table, x: u32) -> StackId {
        for (n, _) in self.open.drain(..) {
            self.pos[n as usize] = 0;
        }
        self.lazy = Some(x);
        self.plain(out, t, x)
    }

    /// Writes a lazy state out in `open`, so a walk can start from it.
    pub(super) fn materialize(&mut self, out: &mut Out, t: &Table) {
        let Some(x) = self.lazy.take() else { return };
        self.plain(out, t, x);
        let mut n = x;
        while n != NONE && t.role[n as usize] == Role::Normal {
            self.chain.push(n);
            n = t.parent[n as usize];
        }
        while let Some(n) = self.chain.pop() {
            self.open.push((n, StackId(self.plain_stack[n as usize])));
            self.pos[n as usize] = self.open.len() as u32;
        }
    }

    /// The stack on top now.
    pub(super) fn top(&self) -> Option<StackId> {
        match self.lazy {
            Some(x) => Some(StackId(self.plain_stack[x as usize])),
            None => self.open.last().map(|o| o.1),
        }
    }

    /// Moves the open stack to `top`: closes down to the lowest common ancestor
    /// and opens the rest. `(program)`/`(garbage collector)` continue from the
    /// previous top instead of their parent; ignored nodes stop the walk.
    pub(super) fn step(&mut self, out: &mut Out, t: &Table, top: u32) {
        let next = |n: u32, open: &[(u32, StackId)]| -> u32 {
            if t.role[n as usize] == Role::OnTop {
                open.last().map_or(NONE, |o| o.0)
            } else {
                t.parent[n as usize]
            }
        };
        let mut lca = top;
        while lca != NONE && self.pos[lca as usize] == 0 {
            lca = next(lca, &self.open);
        }
        while let Some(&(n, _)) = self.open.last() {
            if n == lca {
                break;
            }
            self.pos[n as usize] = 0;
            self.open.pop();
        }
        self.to_open.clear();
        let mut node = top;
        while node != NONE
            && node != lca
            && matches!(t.role[node as usize], Role::Normal | Role::OnTop)
        {
            self.to_open.push(node);
            node = next(node, &self.open);
            if self.to_open.len() > t.parent.len() {
                break; // cannot happen once cycles are cut; a guard all the same
            }
        }
        for k in (0..self.to_open.len()).rev() {
            let node = self.to_open[k];
            let prefix = self.open.last().map(|o| o.1);
            let key = prefix.map_or(u32::MAX - 1, |p| p.0);
            let s = match self.last[node as usize] {
                (k, s) if k == key => s,
                _ => {
                    let s = out.profile.stacks.intern(prefix, t.frame[node as usize]);
                    self.last[node as usize] = (key, s);
                    s
                }
            };
            self.open.push((node, s));
            self.pos[node as usize] = self.open.len() as u32;
        }
    }
}

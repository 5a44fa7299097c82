//! The profile model: interned frames, a stack table, samples, and what is built
//! from them (call tree, function table). Knows nothing of files or terminals.

pub mod diff;
pub mod frames;
pub mod granularity;
pub mod invert;
pub mod lint;
pub mod listing;
pub mod profile;
pub mod recipe;
pub mod sandwich;
pub mod search;
pub mod stacks;
#[cfg(test)]
pub(crate) mod testing;
pub mod timerange;
pub mod top;
pub mod transform;
pub mod tree;

pub use frames::{FrameId, Frames};
pub use profile::{
    FrameKind, FrameMeta, Profile, ProfileMeta, Samples, ThreadInfo, Unit, ValueType, Warning,
    Warnings,
};
pub use recipe::{Recipe, RecipeError};
pub use stacks::{StackId, StackTable};
pub use top::{FunctionRow, SortKey, TopTable};
pub use transform::{Transform, TransformError, apply, apply_all};
pub use tree::{CallTree, ChildOrder, NOISE_SAMPLES, NodeId, TreeOptions};

//! ember: a terminal flamegraph explorer.
//!
//! Data flows one way: `input` (bytes) -> `formats` (samples) -> `model` (trees,
//! tables) -> `ui` (terminal) or `output` (CLI printers).

pub mod alloc;
pub mod budget;
pub mod bundle;
pub mod capture;
pub mod cli;
pub mod context;
pub mod error;
pub mod formats;
pub mod input;
pub mod limits;
pub mod live;
pub mod model;
pub mod output;
pub mod sanitize;
pub mod sources;
pub mod supervise;
pub mod timeline;
pub mod ui;

#[global_allocator]
static GLOBAL: alloc::HugePageHint = alloc::HugePageHint;

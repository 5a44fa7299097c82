//! ember: a terminal flamegraph explorer.
//!
//! Data flows one way: `sources` (where a profile comes from: bytes) ->
//! `formats` (samples) -> `model` (trees, tables; `context` and `timeline`
//! beside it for host logs) -> `ui` (terminal) or `output` (CLI printers).
//! `host` keeps the machine safe (memory budget, supervisor, sanitising).

pub mod calendar;
pub mod capture;
pub mod cli;
pub mod context;
pub mod error;
pub mod formats;
pub mod host;
pub mod live;
pub mod model;
pub mod output;
pub mod sources;
pub mod timeline;
pub mod ui;

#[global_allocator]
static GLOBAL: host::alloc::HugePageHint = host::alloc::HugePageHint;

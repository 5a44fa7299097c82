//! The views: each a widget that draws the profile from state it borrows
//! (the flame/icicle graph and its state, the function table, callers and
//! callees, the comparison, the timeline pane and its heat map).

pub mod diff;
pub mod flame;
pub mod flame_state;
pub mod sandwich;
pub mod source;
pub mod table;
pub mod timeline;

//! What keeps the viewer running: the job thread and its results, the live
//! worker that follows a source, the terminal's setup and restore, the trace.
//! They hand results to the app as messages (`ui::Msg`).

pub mod jobs;
pub mod live;
pub mod terminal;
pub mod trace;

//! What the event loop hears ([`Msg`]), and the functions that turn the job
//! thread's and the live worker's own reports into it.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use crossterm::event::Event;

use crate::error::LoadError;
use crate::ui::app::Loaded;
use crate::ui::runtime;

/// What the event loop hears.
pub enum Msg {
    Input(Event),
    InputClosed(String),
    Loaded(Box<Loaded>),
    /// A live reload: the new view and what changed.
    Reloaded(Box<runtime::live::Reload>),
    /// The followed file is missing or unreadable right now (`None`: fine again).
    LiveProblem(Option<String>),
    /// The followed stream (stdin) has ended.
    LiveEnded,
    /// A sliding window was asked for but the profile has no timestamps.
    LiveNoTime,
    /// A job (transform, inverted view) finished.
    Job(Box<runtime::jobs::Done>),
    /// The `--context` logs, read (or why each could not be).
    Contexts(Vec<Result<crate::context::ContextSource, String>>),
    LoadFailed(LoadError),
    WorkerPanicked(String),
    Signal(i32),
}

impl From<crate::ui::runtime::live::LiveMsg> for Msg {
    fn from(m: crate::ui::runtime::live::LiveMsg) -> Msg {
        use runtime::live::LiveMsg;
        match m {
            LiveMsg::Reloaded(r) => Msg::Reloaded(r),
            LiveMsg::Problem(p) => Msg::LiveProblem(p),
            LiveMsg::Ended => Msg::LiveEnded,
            LiveMsg::NoTime => Msg::LiveNoTime,
            LiveMsg::LoadFailed(e) => Msg::LoadFailed(e),
            LiveMsg::Panicked(m) => Msg::WorkerPanicked(m),
        }
    }
}

/// The live worker's [`crate::ui::runtime::live::Report`] into the event loop's channel.
pub fn live_report(tx: Sender<Msg>) -> crate::ui::runtime::live::Report {
    Arc::new(move |m| tx.send(Msg::from(m)).is_ok())
}

/// The job thread's results into the event loop's channel.
pub fn jobs_report(
    tx: Sender<Msg>,
) -> impl Fn(crate::ui::runtime::jobs::JobResult) -> bool + Send + 'static {
    move |r| {
        tx.send(match r {
            Ok(done) => Msg::Job(done),
            Err(panic) => Msg::WorkerPanicked(panic),
        })
        .is_ok()
    }
}

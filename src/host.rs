//! The host ember runs on, kept safe: the memory budget a load is checked
//! against before it starts ([`budget`], from [`limits`]: ulimit, cgroup,
//! MemAvailable), the allocator's huge-page hint ([`alloc`]), the parent that
//! restores the terminal whatever happens to the viewer ([`supervise`]), and
//! the one door untrusted text passes to reach the terminal ([`sanitize`]).

pub mod alloc;
pub mod budget;
pub mod limits;
pub mod sanitize;
pub mod supervise;

//! Helpers shared by the integration tests: loading inline text through the real
//! loader (via a file in a temporary directory), walking a call tree, and printing
//! it back as normalised folded lines.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use ember::error::LoadError;
use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, FrameId, NodeId, Profile, SortKey, TopTable, TreeOptions};
use ember::output::value_text;
use ember::sources::input::{Progress, Source};

/// The repository root (where Cargo.toml is).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Loads `path` through `formats::load` with default options.
pub fn load_path(path: &Path) -> Result<Profile, LoadError> {
    formats::load(
        &Source::Path(path.to_path_buf()),
        &LoadOptions::default(),
        &Progress::new(),
    )
}

/// A temporary directory holding one input file.
pub struct Input {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// Writes `bytes` to `<tempdir>/<name>`.
pub fn write_input(name: &str, bytes: &[u8]) -> Input {
    let dir = tempfile::tempdir().expect("creating a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("writing the test input");
    Input { dir, path }
}

/// Writes `bytes` to a temporary file and loads it.
pub fn try_load_bytes(bytes: &[u8]) -> Result<Profile, LoadError> {
    let input = write_input("input.folded", bytes);
    load_path(&input.path)
}

/// Like [`try_load_bytes`], panicking with the error's message on failure.
pub fn load_bytes(bytes: &[u8]) -> Profile {
    match try_load_bytes(bytes) {
        Ok(p) => p,
        Err(e) => panic!("loading failed: {e}"),
    }
}

/// Writes `bytes` to a temporary file and loads it as folded, skipping detection
/// (what `--input-format folded` does).
pub fn load_bytes_as_folded(bytes: &[u8]) -> Profile {
    let input = write_input("input.folded", bytes);
    let options = LoadOptions {
        format: Some(formats::Format::Folded),
        ..LoadOptions::default()
    };
    formats::load(
        &Source::Path(input.path.clone()),
        &options,
        &Progress::new(),
    )
    .unwrap_or_else(|e| panic!("loading failed: {e}"))
}

/// The tree of the profile's default value, siblings in name order.
pub fn default_tree(p: &Profile) -> CallTree {
    CallTree::build(
        p,
        TreeOptions {
            value: p.default_value,
            ..TreeOptions::default()
        },
    )
}

/// The function table of the default tree, sorted by self weight (largest first).
pub fn top_table(p: &Profile, tree: &CallTree) -> TopTable {
    let mut t = TopTable::build(p, tree);
    t.sort(p, SortKey::SelfWeight, true);
    t
}

pub fn frame_name(p: &Profile, f: FrameId) -> String {
    p.frames.name(f).into_owned()
}

/// Every node of `tree` reachable from the root (the root included), depth first.
pub fn all_nodes(tree: &CallTree) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![NodeId::ROOT];
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(tree.child_ids(n));
    }
    out
}

/// The node's frame names from the root down, joined with `;`.
pub fn stack_text(p: &Profile, tree: &CallTree, n: NodeId) -> String {
    tree.frame_path(p, n)
        .iter()
        .map(|&f| frame_name(p, f))
        .collect::<Vec<_>>()
        .join(";")
}

/// The tree as folded text: one `a;b;c <self>` line per node with a non-zero self
/// weight, values as `output::value_text` prints them, lines sorted. A root with
/// self weight (samples without any frame) prints as `<no frames> N`.
pub fn folded_lines(p: &Profile, tree: &CallTree) -> Vec<String> {
    let vt = &p.value_types[tree.options.value];
    let mut lines: Vec<String> = all_nodes(tree)
        .into_iter()
        .filter(|&n| tree.self_weight(n) != 0)
        .map(|n| {
            let stack = if n == NodeId::ROOT {
                "<no frames>".to_string()
            } else {
                stack_text(p, tree, n)
            };
            format!("{stack} {}", value_text(tree.self_weight(n), vt))
        })
        .collect();
    lines.sort();
    lines
}

/// [`folded_lines`] of a freshly built default tree, as one newline-ended text.
pub fn folded_text(p: &Profile) -> String {
    let tree = default_tree(p);
    let mut s = folded_lines(p, &tree).join("\n");
    s.push('\n');
    s
}

/// The live node at the end of a path of names, if there is one.
pub fn node_at(p: &Profile, tree: &CallTree, path: &[&str]) -> Option<NodeId> {
    let mut cur = NodeId::ROOT;
    for name in path {
        cur = tree.child_ids(cur).find(|&c| {
            tree.frame(p, c)
                .is_some_and(|f| p.frames.raw(f) == name.as_bytes())
        })?;
    }
    Some(cur)
}

/// Like [`node_at`], panicking when the path does not exist.
pub fn node(p: &Profile, tree: &CallTree, path: &[&str]) -> NodeId {
    node_at(p, tree, path).unwrap_or_else(|| panic!("no node at {path:?}"))
}

/// The row of the function called `name` in `table`.
pub fn row<'a>(
    p: &Profile,
    table: &'a TopTable,
    name: &str,
) -> Option<&'a ember::model::FunctionRow> {
    table
        .rows
        .iter()
        .find(|r| p.frames.raw(r.frame) == name.as_bytes())
}

/// The `.folded` files in `dir`, sorted.
pub fn folded_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "folded"))
        .collect();
    files.sort();
    files
}

/// A line on stderr that the test harness does not capture, so it shows in CI logs.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The shared corpus named by `$EMBER_CORPUS`. Unset: says that `suite` was skipped
/// and returns `None`. Set to something that is not a folder: fails the test.
pub fn corpus(suite: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("EMBER_CORPUS") else {
        say(&format!("{suite} skipped: EMBER_CORPUS is not set"));
        return None;
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.is_dir(),
        "EMBER_CORPUS={} is not a folder",
        dir.display()
    );
    Some(dir)
}

/// What `app` draws on a `w` x `h` terminal, as text rows (trailing blanks cut).
pub fn screen_of(app: &mut ember::ui::app::App, w: u16, h: u16) -> String {
    use unicode_width::UnicodeWidthStr;
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("test terminal");
    ember::ui::draw_frame(&mut term, app).expect("draw");
    let buf = term.backend().buffer().clone();
    let rows: Vec<String> = (0..h)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < w {
                let sym = buf[(x, y)].symbol();
                row.push_str(sym);
                x += u16::try_from(sym.width().max(1)).unwrap_or(1);
            }
            row.trim_end().to_string()
        })
        .collect();
    rows.join("\n")
}

/// The next view a live worker sends on `rx`, within a generous time.
pub fn next_view(
    rx: &std::sync::mpsc::Receiver<ember::ui::Msg>,
) -> Box<ember::ui::runtime::live::Reload> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(ember::ui::Msg::Reloaded(r)) => return r,
            Ok(ember::ui::Msg::LoadFailed(e)) => panic!("load failed: {e}"),
            Ok(_) => {}
            Err(e) => panic!("no view from the worker: {e}"),
        }
    }
}

/// A gzipped text file's contents.
#[allow(dead_code)]
pub fn gunzip_text(path: &Path) -> String {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

#[allow(dead_code)]
/// A vmstat-like log of `wa` values, one report a second from `start_ns`.
pub fn log(name: &str, start_ns: i64, wa: &[f32]) -> ember::context::ContextSource {
    ember::context::ContextSource {
        name: name.into(),
        kind: ember::context::ContextKind::Vmstat,
        host: None,
        n_cpus: Some(2),
        clock: ember::context::Clock::Relative,
        intervals: (0..wa.len() as i64)
            .map(|i| ember::context::Interval {
                end_ns: start_ns + (i + 1) * 1_000_000_000i64,
                len_ns: 1_000_000_000i64,
                since_boot: false,
                line: i as u32 + 3,
            })
            .collect(),
        series: vec![ember::context::Series {
            metric: ember::context::Metric::CpuIowait,
            entity: ember::context::Entity::System,
            values: wa.to_vec(),
        }],
        warnings: vec![],
    }
}

/// `ember ARGS` in-process-free: the binary, without the supervisor.
#[allow(dead_code)]
pub fn run_ember(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .env("EMBER_NO_SUPERVISOR", "1")
        .output()
        .expect("running ember")
}

/// A command's stdout as text.
#[allow(dead_code)]
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether `go` runs here. Where it does not, says that `suite` was skipped
/// and returns false, unless `EMBER_REQUIRE_GO` is set (as `.ci/run` sets it):
/// then it fails.
#[allow(dead_code)]
pub fn go_available(suite: &str) -> bool {
    let found = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("EMBER_REQUIRE_GO").is_none(),
            "EMBER_REQUIRE_GO is set but `go` does not run"
        );
        say(&format!("{suite} skipped: go is not installed"));
    }
    found
}

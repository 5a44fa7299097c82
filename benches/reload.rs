//! Live reload as the user sees it: the time from a write to the file until the
//! viewer has drawn the new profile. Not a timed test: it prints medians for
//! BENCHMARKS.md.
//!
//!   cargo bench --bench reload -- FILE      (env EMBER_BENCH_RUNS, default 5)
//!
//! FILE (e.g. 100k.folded from `gen_folded.py --seed 1 --lines 100000`, 235 MB) is
//! copied into a temporary directory and followed by the real worker (OS watcher,
//! debouncer, incremental read, view build). Then: append 1 MB of whole lines and
//! wait for the view, RUNS times; replace the file by rename and wait for the view.
//! Each figure runs from just after the write to the end of a 200x50 draw.

mod common;

use std::io::Write;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{median, ms};
use ember::formats::LoadOptions;
use ember::sources::input::Progress;
use ember::ui::Msg;
use ember::ui::app::{App, Phase};
use ember::ui::chrome::keymap::Keymap;
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::runtime::live::{self, Reload, Settings};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn next_view(rx: &Receiver<Msg>) -> anyhow::Result<Box<Reload>> {
    loop {
        match rx.recv_timeout(Duration::from_secs(120))? {
            Msg::Reloaded(r) => return Ok(r),
            Msg::LoadFailed(e) => anyhow::bail!("load failed: {e}"),
            _ => {}
        }
    }
}

fn main() -> anyhow::Result<()> {
    let Some(file) = common::files().into_iter().next() else {
        eprintln!("usage: cargo bench --bench reload -- FILE");
        return Ok(());
    };
    let runs = common::runs();
    let bytes = std::fs::read(&file)?;
    // 1 MB of whole lines from the middle of the file.
    let start = bytes[bytes.len() / 2..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(0, |i| bytes.len() / 2 + i + 1);
    let end = bytes[start + (1 << 20)..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| start + (1 << 20) + i + 1);
    let chunk = bytes[start..end].to_vec();

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("cpu.folded");
    std::fs::write(&path, &bytes)?;
    let (tx, rx) = mpsc::channel();
    let mut app = App::new(
        "bench".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::TrueColor),
        Phase::Loading {
            progress: Progress::new(),
            started: Instant::now(),
        },
        Orientation::Icicle,
    );
    let mut term = Terminal::new(TestBackend::new(200, 50))?;
    let t = Instant::now();
    app.live = Some(live::spawn_file(
        ember::ui::live_report(tx),
        path.clone(),
        LoadOptions::default(),
        Progress::new(),
        Orientation::Icicle,
        Settings::default(),
    )?);
    app.reloaded(next_view(&rx)?);
    ember::ui::draw_frame(&mut term, &mut app)?;
    let first = t.elapsed();
    println!("{file}: {} MB; first view {}", bytes.len() >> 20, ms(first));

    let mut appends = Vec::new();
    for _ in 0..runs {
        let mut f = std::fs::OpenOptions::new().append(true).open(&path)?;
        f.write_all(&chunk)?;
        drop(f);
        let t = Instant::now();
        let r = next_view(&rx)?;
        app.reloaded(r);
        ember::ui::draw_frame(&mut term, &mut app)?;
        appends.push(t.elapsed());
    }
    println!(
        "  append {:.2} MB -> drawn   median {}  (max {}, {runs} runs; includes the watcher's debounce)",
        chunk.len() as f64 / 1048576.0,
        ms(median(appends.clone())),
        ms(appends.iter().copied().max().unwrap_or_default())
    );

    let tmp = dir.path().join(".cpu.folded.tmp");
    std::fs::write(&tmp, &bytes)?;
    // Let the kernel write the copy back first: its flush competes for the
    // CPU with the reload otherwise (the file is read from the page cache).
    std::fs::File::open(&tmp)?.sync_all()?;
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    std::fs::rename(&tmp, &path)?;
    let r = next_view(&rx)?;
    let received = t.elapsed();
    app.reloaded(r);
    let applied = t.elapsed();
    ember::ui::draw_frame(&mut term, &mut app)?;
    println!(
        "  rename-over -> drawn     {}  (view received {}, applied {}; first view {})",
        ms(t.elapsed()),
        ms(received),
        ms(applied),
        ms(first)
    );
    Ok(())
}

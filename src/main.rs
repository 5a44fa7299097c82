use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ember::host::alloc::from_env();
    let cli = ember::cli::Cli::parse();
    let doing = cli.doing();
    ember::host::limits::prepare(&doing);
    if let Some((message, code)) = cli.budget_refusal() {
        eprint!("{message}");
        return ExitCode::from(code);
    }
    if cli.opens_viewer()
        && let Some(code) = ember::host::supervise::run(&doing)
    {
        return code;
    }
    match ember::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ember: {e:#}");
            // A thread or a mapping refused for want of memory (EAGAIN, ENOMEM)
            // under a limit is the memory message too.
            let starved = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .or_else(|| {
                        c.downcast_ref::<ember::error::LoadError>()
                            .and_then(ember::error::LoadError::io_error)
                    })
                    .and_then(std::io::Error::raw_os_error)
                    .is_some_and(|n| n == 11 || n == 12)
            });
            if starved && ember::host::limits::Limits::read().tightest().is_some() {
                eprint!("{}", ember::host::limits::message());
            }
            ExitCode::from(if ember::cli::is_usage(&e) { 2 } else { 1 })
        }
    }
}

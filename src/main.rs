use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ember::alloc::from_env();
    let cli = ember::cli::Cli::parse();
    match ember::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ember: {e:#}");
            ExitCode::from(1)
        }
    }
}

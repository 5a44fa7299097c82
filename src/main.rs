use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = ember::cli::Cli::parse();
    match ember::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ember: {e:#}");
            ExitCode::from(1)
        }
    }
}

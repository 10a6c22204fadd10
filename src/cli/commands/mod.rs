//! Each command in a file of its own: its plan, one pipeline call, the
//! output rendered. What the command returns is mapped to an exit code in
//! one place, `error.rs`.

mod check;
mod fidelity;
mod generate;
mod import;
mod ledger;
mod models;
mod notes;
mod prices;
mod recall;
mod replay;
mod report;
mod stability;
mod sweep;
mod usage;

use super::args::{Cli, Command, LedgerCommand, PricesCommand};
use super::error::Outcome;
use crate::app::AppError;

/// Runs a parsed command line.
pub(super) fn execute(cli: Cli) -> Result<Outcome, AppError> {
    match cli.command {
        Command::Replay(a) => replay::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Report(a) => report::run(a),
        Command::Fidelity(a) => fidelity::run(a),
        Command::Stability(a) => stability::run(a),
        Command::Check(a) => check::run(a),
        Command::Usage(a) => usage::run(&a),
        Command::Gen(a) => generate::run(a),
        Command::Models(a) => models::run(a),
        Command::Prices(PricesCommand::Update { url, out }) => prices::update(&url, &out),
        Command::Import(a) => import::run(a),
        Command::Ledger(LedgerCommand::Repair { dir }) => ledger::repair(&dir),
        Command::Recall(a) => recall::run(a),
    }
}

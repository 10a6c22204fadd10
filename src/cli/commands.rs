//! Subcommands: argument definitions and how each becomes a plan and runs.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::CliError;
use crate::engine::ledger::{DurableLedger, InMemoryLedger, ToolResultLedger, not_found};
use crate::engine::message::{BlockKind, Message};
use crate::engine::recall::{RecallFormat, RecallRequest};
use crate::trace::{LoadedTraces, Trace, load_path};

/// What agent conversations really cost, and which tool-result compaction
/// and prompt-cache policy makes them cheapest.
#[derive(Debug, Parser)]
#[command(name = "tracecost", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print what the recall_tool_result tool would return for a tool result.
    #[command(
        after_help = "Examples:\n  tracecost recall traces/massage-gun.json toolu_03 --query B07\n  tracecost recall trace.json tm_1a2b3c4d5e6f7a8b --json-path products.0.stats --ledger .ledger"
    )]
    Recall(RecallArgs),
}

#[derive(Debug, Args)]
struct RecallArgs {
    /// The trace whose tool results are recorded.
    trace: PathBuf,
    /// A mem_id (tm_…) or a tool_use id.
    id: String,
    /// summary (the stub) or full (the payload).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Case-sensitive text to find.
    #[arg(long)]
    query: Option<String>,
    /// Start, in characters.
    #[arg(long)]
    offset: Option<u64>,
    /// How many characters to return.
    #[arg(long)]
    max_chars: Option<u64>,
    /// Dotted path into a JSON payload, e.g. products.3.stats.current.
    #[arg(long)]
    json_path: Option<String>,
    /// Record into (and recall from) a durable ledger in this directory.
    #[arg(long)]
    ledger: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Summary,
    Full,
}

/// Runs a parsed command line; returns the exit code.
pub fn execute(cli: Cli) -> Result<u8, CliError> {
    match cli.command {
        Command::Recall(a) => recall(a),
    }
}

fn load(path: &std::path::Path) -> Result<LoadedTraces, CliError> {
    let loaded = load_path(path)?;
    for w in &loaded.warnings {
        eprintln!("tracecost: warning: {w}");
    }
    Ok(loaded)
}

/// Records every tool result of `trace` into `ledger`.
fn record_all(trace: &Trace, ledger: &dyn ToolResultLedger) -> Result<(), CliError> {
    let mut names = std::collections::HashMap::new();
    for b in trace.messages.iter().flat_map(Message::blocks) {
        match b.kind() {
            BlockKind::ToolUse { id, name } => {
                names.insert(
                    id.clone(),
                    (name.clone(), b.tool_input().map_or("{}", |r| r.get())),
                );
            }
            BlockKind::ToolResult { tool_use_id, .. } => {
                let (name, args) = names
                    .get(tool_use_id)
                    .map_or(("unknown", "{}"), |(n, a)| (&**n, *a));
                ledger.record(
                    tool_use_id,
                    name,
                    args,
                    b.tool_result_payload().unwrap_or(""),
                )?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn recall(a: RecallArgs) -> Result<u8, CliError> {
    let loaded = load(&a.trace)?;
    let ledger: Box<dyn ToolResultLedger> = match &a.ledger {
        Some(dir) => Box::new(DurableLedger::open(dir)?),
        None => Box::new(InMemoryLedger::new()),
    };
    for t in &loaded.traces {
        record_all(t, ledger.as_ref())?;
    }
    let request = RecallRequest {
        format: a.format.map(|f| match f {
            FormatArg::Summary => RecallFormat::Summary,
            FormatArg::Full => RecallFormat::Full,
        }),
        query: a.query,
        offset: a.offset,
        max_chars: a.max_chars,
        json_path: a.json_path,
    };
    let mem_id = match ledger.get(&a.id)? {
        Some(rec) => Some(rec.handle.mem_id),
        None => ledger.get_by_call_id(&a.id)?.map(|rec| rec.handle.mem_id),
    };
    let text = match mem_id {
        Some(id) => ledger.fetch(&id, &request),
        None => not_found(&a.id),
    };
    let mut out = std::io::stdout().lock();
    // Exactly what the model would receive, byte for byte.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(0)
}

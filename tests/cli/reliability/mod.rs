//! The reliability contract (`docs/robustness.md`, "What tracecost never
//! does"): never delete or overwrite what is not its own, survive every
//! interruption, refuse bad input clearly. Each module runs the binary
//! against real folders and checks what is left on disk.

mod fleet;
mod inputs;
mod ledger;
mod output;
mod scale;
mod skip_invalid;

//! The generators' integration tests, one binary (`cargo test -p
//! tracecost-gen`): the bundled traces and the fleets, through the crate's
//! public API alone. What the modules share is in `util`.

mod util;

mod fleet;
mod traces;

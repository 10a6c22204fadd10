//! The application crate's integration tests, one binary (`cargo test -p
//! tracecost-app`): the pipelines as library calls, the fleet answer, an
//! account cut into segments, through the crate's public API alone. What
//! the modules share is in `util`.

mod util;

mod fleet;
mod pipelines;
mod segments;

//! The replay crate's integration tests, one binary (`cargo test -p
//! tracecost-replay`): a group of configs against each alone, the
//! incremental replay core against the reference, what an OpenAI record
//! tells the replay, the recall detector's placebo, and the policies each
//! provider runs, through the crate's public API alone. What the modules
//! share is in `util`.

mod util;

mod group;
mod incremental;
mod openai_record;
mod placebo;
mod providers;

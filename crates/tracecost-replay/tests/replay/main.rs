//! The replay crate's integration tests, one binary (`cargo test -p
//! tracecost-replay`): the incremental replay core against the reference,
//! what an OpenAI record tells the replay, and the recall detector's
//! placebo, through the crate's public API alone. What the modules share
//! is in `util`.

mod util;

mod incremental;
mod openai_record;
mod placebo;

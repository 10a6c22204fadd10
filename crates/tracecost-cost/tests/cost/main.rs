//! The cost crate's integration tests, one binary (`cargo test -p
//! tracecost-cost`): the prompt-cache simulator, prices and pricing files,
//! token counting and the tokenizer backends, through the crate's public
//! API alone. What the modules share is in `util`.

mod util;

mod cache_sim;
mod pricing;
mod tokenizer_backends;
mod tokens;

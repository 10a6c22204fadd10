//! The `massage-gun` reference trace: a product-research agent that pulls one
//! huge Keepa payload into its context and pays for it on every later call.
//!
//! The published figures of the original trace are reproduced exactly where
//! they are counts and within a fraction of a percent where they are sizes;
//! see [`super::MASSAGE_GUN_CALL_CHARS`] and [`super::MASSAGE_GUN_INPUT_TOKENS`].
//!
//! This module holds the figures of the research every part shares (when
//! it ran, its seed, the categories, how many products). The parts:
//!
//! - what the agent researches: the products of the search ([`products`]);
//! - the tool payloads, one module per data source: the Keepa search and
//!   product lookup ([`keepa`]), the Jungle Scout sales estimates and
//!   keyword search ([`jungle_scout`]), the review insights ([`reviews`]);
//! - the prompt, instructions and reference tables ([`prompt`]), and the
//!   agent's final report ([`report`]);
//! - the call driver ([`driver`]): the messages in order, each payload
//!   sized to the published figures, and the six calls.
//!
//! Everything is read from the data files under `data/massage_gun/`
//! ([`corpus`]).

mod corpus;
mod driver;
mod jungle_scout;
mod keepa;
mod products;
mod prompt;
mod report;
mod reviews;

pub(crate) use driver::build;

/// 2025-06-12T14:03:00Z, when the first call started.
const START_MS: u64 = 1_749_736_980_000;

/// Milliseconds between consecutive call starts (model time plus tool time).
const GAPS_MS: [u64; 5] = [11_400, 19_800, 74_200, 33_500, 29_100];

const SEED: u64 = 0x6d61_7373_6167_6521;

/// Keepa's browse node of "Health & Household".
const ROOT_CATEGORY: i64 = 3_760_901;
/// "Electric Massagers" under Massage Tools & Equipment.
const LEAF_CATEGORY: i64 = 13_242_721;

/// Products in the search result; the first [`LOOKUP_COUNT`] are looked up.
const SEARCH_COUNT: usize = 20;
const LOOKUP_COUNT: usize = 20;

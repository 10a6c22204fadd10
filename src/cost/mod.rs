//! The cost model: token counting, the prompt-cache simulator and pricing.

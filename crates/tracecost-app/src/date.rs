//! Calendar dates of timestamps: what the fleet's days and the usage
//! periods are named by.

/// `YYYY-MM-DD` of a Unix-millisecond timestamp (UTC).
pub fn date_of(ms: u64) -> String {
    tracecost_engine::calendar::date_of_ms(ms)
}

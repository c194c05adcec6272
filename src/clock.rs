//! The wall clock: milliseconds since the Unix epoch, for the times mf records.

/// Milliseconds since the Unix epoch (0 before it; saturating far after it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

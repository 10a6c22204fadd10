//! Stability checks (filled in below).

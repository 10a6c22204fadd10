//! The report crate's integration tests, one binary (`cargo test -p
//! tracecost-report`): the charts, drawn and read back, through the
//! crate's public API alone.

mod charts;

//! Unit tests of reading.

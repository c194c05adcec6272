//! Unit tests of the engine's laws, on hand-built entries.

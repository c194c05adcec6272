//! One integration binary: the real `mf` on fixture files in temp dirs, and the library's compact
//! pipeline with test summarizers.

mod audit;
mod cli;
mod compact;
mod corpus;
mod errors;
mod expand;
mod explain;
mod fidelity;
mod http;
mod json_contract;
mod mask;
mod pipeline;
mod protect;
mod providers;
mod recall;
mod server;
mod snapshots;
mod util;

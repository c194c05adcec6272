//! One integration binary: the real `mf` on fixture files in temp dirs, and the library's compact
//! pipeline with test summarizers.

mod agents;
mod cache;
mod cited;
mod cli;
mod compact;
mod corpus;
mod errors;
mod expand;
mod explain;
mod fidelity;
mod fleet;
mod fresh;
mod http;
mod json_contract;
mod pipeline;
mod providers;
mod recall;
mod scale;
mod server;
mod snapshots;
mod util;

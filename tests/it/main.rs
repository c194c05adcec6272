//! One integration binary: the real `mf` on fixture files in temp dirs, and the library's compact
//! pipeline with test summarizers.

mod agents;
mod audit;
mod cache;
mod cited;
mod cli;
mod compact;
mod concurrency;
mod corpus;
mod crash;
mod errors;
mod expand;
mod explain;
mod fidelity;
mod fleet;
mod found;
mod fresh;
mod fuzz_smoke;
mod hostile;
mod http;
mod json_contract;
mod live;
mod live_writer;
mod mask;
mod model;
mod oracle;
mod pipeline;
mod protect;
mod providers;
mod recall;
mod regressions;
mod scale;
mod server;
mod snapshots;
mod trust;
mod util;

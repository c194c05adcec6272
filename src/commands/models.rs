//! `mf models`: the model table, as a table or JSON.

use crate::model::MODELS;
use crate::render::{self, ModelView, Ui};

pub fn models(json: bool, ui: &Ui) -> std::io::Result<()> {
    let rows: Vec<ModelView> = MODELS
        .iter()
        .map(|r| ModelView {
            alias: r.alias,
            provider: r.provider.as_str(),
            id: r.id,
            context_tokens: r.context_tokens,
            span_tokens: r.span_tokens,
            output_tokens: r.output_tokens,
            price_in_per_mtok: r.price_in,
            price_out_per_mtok: r.price_out,
            verified: r.verified,
        })
        .collect();
    if json {
        return render::stdout(&format!(
            "{}\n",
            serde_json::to_string(&rows).expect("rows serialize")
        ));
    }
    render::stdout(&render::models_table(ui, &rows))
}

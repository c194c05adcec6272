//! `Grid`: rows of cells, printed as the reader can use them — on a terminal, a table fitted to
//! its width (words wrap, never cut off); on a pipe, plain lines with no box drawing: tab-separated
//! values under a header, or `key: value` lines.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use unicode_width::UnicodeWidthStr;

use crate::render::Ui;

/// How a grid prints when stdout is not a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    /// A header line, then one line per row, cells separated by tabs (for `cut`, `awk -F'\t'`,
    /// `sort`, spreadsheets).
    Tsv,
    /// Each row as `header: cell` lines, rows apart by a blank line (for `grep`, and rows whose
    /// cells are sentences).
    Records,
    /// Two columns read as `key: value`, the header row first (one record, such as a decision).
    Pairs,
}

/// A table whose form depends on where it goes.
#[derive(Debug, Clone)]
pub struct Grid {
    plain: Plain,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Grid {
    pub fn new(plain: Plain) -> Self {
        Self {
            plain,
            header: Vec::new(),
            rows: Vec::new(),
        }
    }

    pub fn set_header<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.header = cells.into_iter().map(Into::into).collect();
    }

    pub fn add_row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The grid as text (no final newline): a table, flush left, on a terminal wide enough for
    /// one whose words stay whole; else its rows as lines after `indent` (on a terminal, `key:
    /// value` lines wrapped to its width).
    pub fn render(&self, ui: &Ui, indent: &str) -> String {
        let lines: Vec<String> = if ui.stdout_is_terminal() {
            let width = ui.width();
            if self.narrowest() <= width {
                return self.boxed(width).join("\n");
            }
            self.wrapped(width.saturating_sub(indent.width()).max(20))
        } else {
            self.plain_lines()
        };
        lines
            .iter()
            .map(|l| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("{indent}{l}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The narrowest the table can be drawn without splitting a word: each column as wide as
    /// its longest word, plus the borders and padding.
    fn narrowest(&self) -> usize {
        let columns = self
            .rows
            .iter()
            .chain(std::iter::once(&self.header))
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        let word = |row: &Vec<String>, c: usize| {
            row.get(c).map_or(0, |cell| {
                cell.split_whitespace()
                    .map(|w| w.width())
                    .max()
                    .unwrap_or(0)
            })
        };
        let words: usize = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .chain(std::iter::once(&self.header))
                    .map(|r| word(r, c))
                    .max()
                    .unwrap_or(0)
            })
            .sum();
        words + 3 * columns + 1
    }

    /// The record forms (`key: value`), each line wrapped to `width`.
    fn wrapped(&self, width: usize) -> Vec<String> {
        let plain = match self.plain {
            Plain::Tsv => Self {
                plain: Plain::Records,
                ..self.clone()
            },
            _ => self.clone(),
        };
        plain
            .plain_lines()
            .iter()
            .flat_map(|l| {
                if l.is_empty() {
                    vec![String::new()]
                } else {
                    crate::render::wrap(l, width, "    ")
                        .trim_end()
                        .lines()
                        .enumerate()
                        .map(|(i, w)| {
                            if i == 0 {
                                w.trim_start().to_string()
                            } else {
                                w.to_string()
                            }
                        })
                        .collect()
                }
            })
            .collect()
    }

    fn boxed(&self, width: usize) -> Vec<String> {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(u16::try_from(width).unwrap_or(u16::MAX));
        if !self.header.is_empty() {
            t.set_header(self.header.iter().map(|c| no_controls(c)));
        }
        for r in &self.rows {
            t.add_row(r.iter().map(|c| no_controls(c)));
        }
        t.lines().collect()
    }

    fn plain_lines(&self) -> Vec<String> {
        match self.plain {
            Plain::Tsv => {
                let row = |cells: &[String]| {
                    cells
                        .iter()
                        .map(|c| tsv_cell(c))
                        .collect::<Vec<_>>()
                        .join("\t")
                };
                let mut out = Vec::with_capacity(self.rows.len() + 1);
                if !self.header.is_empty() {
                    out.push(row(&self.header));
                }
                out.extend(self.rows.iter().map(|r| row(r)));
                out
            }
            Plain::Records => {
                let mut out = Vec::new();
                for (i, r) in self.rows.iter().enumerate() {
                    if i > 0 {
                        out.push(String::new());
                    }
                    for (k, v) in self.header.iter().zip(r) {
                        out.push(pair(k, v));
                    }
                }
                out
            }
            Plain::Pairs => std::iter::once(&self.header)
                .filter(|h| !h.is_empty())
                .chain(&self.rows)
                .map(|r| match r.as_slice() {
                    [k, v, ..] => pair(k, v),
                    [k] => one_line(k),
                    [] => String::new(),
                })
                .collect(),
        }
    }
}

/// `key: value` on one line.
fn pair(k: &str, v: &str) -> String {
    format!("{}: {}", one_line(k), one_line(v))
}

/// A cell on one line: line breaks become spaces (and any other control character but a tab is
/// shown escaped, as in [`no_controls`]).
fn one_line(s: &str) -> String {
    no_controls(&s.replace("\r\n", " ").replace(['\n', '\r'], " "))
}

/// A cell with every control character but a line break or a tab shown escaped (`\u{1b}`): text
/// from a file (a path, a project, an id) cannot drive the terminal from a table.
fn no_controls(s: &str) -> String {
    if !s
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return s.to_string();
    }
    s.chars()
        .flat_map(|c| {
            if c.is_control() && !matches!(c, '\n' | '\r' | '\t') {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A TSV cell: no tab or line break inside it, and empty shown as `-` (so a column never
/// collapses in `column -t`).
fn tsv_cell(s: &str) -> String {
    let s = one_line(s).replace('\t', " ");
    if s.is_empty() { "-".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(plain: Plain) -> Grid {
        let mut g = Grid::new(plain);
        g.set_header(["file", "a\tb.jsonl"]);
        g.add_row(["action", "folded"]);
        g.add_row(["note", "two\nlines"]);
        g
    }

    #[test]
    fn a_cells_terminal_escape_is_shown_escaped_in_every_form() {
        let mut g = Grid::new(Plain::Tsv);
        g.set_header(["path"]);
        g.add_row(["/w\u{1b}]0;pwned\u{7}.jsonl"]);
        for lines in [g.plain_lines(), g.boxed(80)] {
            let text = lines.join("\n");
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{text}"
            );
            assert!(text.contains("/w\\u{1b}]0;pwned\\u{7}.jsonl"), "{text}");
        }
    }

    #[test]
    fn plain_forms_have_one_line_per_cell_and_no_box_drawing() {
        assert_eq!(
            grid(Plain::Pairs).plain_lines(),
            ["file: a\tb.jsonl", "action: folded", "note: two lines"]
        );
        assert_eq!(
            grid(Plain::Tsv).plain_lines(),
            ["file\ta b.jsonl", "action\tfolded", "note\ttwo lines"]
        );
        assert_eq!(
            grid(Plain::Records).plain_lines(),
            [
                "file: action",
                "a\tb.jsonl: folded",
                "",
                "file: note",
                "a\tb.jsonl: two lines"
            ]
        );
    }
}

//! Items in text: a tokenizer, one classifier per item class, and the units (sentences and tool
//! calls) of a span with the items each carries.

use super::*;
use crate::text;

mod tokens;
mod units;
mod words;

pub use tokens::sentence_ranges;
pub(in crate::fold::audit) use tokens::*;
pub use units::*;
pub(in crate::fold::audit) use words::*;

// ---------------------------------------------------------------------------------------------
// Extraction

pub(super) struct Extractor<'a> {
    text: &'a str,
    toks: Vec<Tok<'a>>,
    claimed: Vec<bool>,
    items: Vec<Item>,
}

impl<'a> Extractor<'a> {
    fn lc(&self, i: usize) -> Option<String> {
        self.toks.get(i).map(|t| t.core.to_ascii_lowercase())
    }

    fn claim(&mut self, from: usize, to: usize) {
        for c in &mut self.claimed[from..=to] {
            *c = true;
        }
    }

    fn span(&self, from: usize, to: usize) -> (Range<usize>, &'a str) {
        let r = self.toks[from].start..self.toks[to].end;
        (r.clone(), &self.text[r])
    }

    fn push(
        &mut self,
        class: ItemClass,
        from: usize,
        to: usize,
        key: String,
        base: Option<String>,
    ) {
        let (at, text) = self.span(from, to);
        self.items
            .push(Item::new(class, text, key, at).with_base(base));
        self.claim(from, to);
    }

    /// No punctuation between token `i` and the next.
    fn joined(&self, i: usize) -> bool {
        let t = &self.toks[i];
        !t.trailed
            && t.raw_start + t.raw.len() == t.end
            && self
                .toks
                .get(i + 1)
                .is_some_and(|n| !n.hard_start && n.start == n.raw_start)
    }

    fn run(mut self) -> Vec<Item> {
        self.lines();
        let n = self.toks.len();
        for i in 0..n {
            if self.claimed[i] {
                continue;
            }
            self.multi(i);
            if !self.claimed[i] {
                self.single(i);
            }
        }
        self.names();
        self.items.sort_by_key(|it| (it.at.start, it.at.end));
        self.items
    }

    /// Commands on their own lines or in backticks, and quoted error strings.
    fn lines(&mut self) {
        let text = self.text;
        let mut fence: Option<bool> = None;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let base = offset;
            offset += line.len();
            let body = line.trim_end_matches(['\n', '\r']);
            let t = body.trim_start();
            let lead = body.len() - t.len();
            if let Some(lang) = t.strip_prefix("```") {
                fence = match fence {
                    Some(_) => None,
                    None => {
                        let lang = lang.trim().to_ascii_lowercase();
                        Some(matches!(
                            lang.as_str(),
                            "" | "sh" | "bash" | "shell" | "console" | "zsh" | "terminal" | "fish"
                        ))
                    }
                };
                continue;
            }
            let prompt = t
                .strip_prefix("$ ")
                .map(|r| (r, true))
                .or_else(|| (fence == Some(true)).then_some((t, false)));
            if let Some((cmd, dollar)) = prompt {
                let cmd_trim = cmd.trim();
                let start =
                    base + lead + (t.len() - cmd.len()) + (cmd.len() - cmd.trim_start().len());
                if !cmd_trim.starts_with('#') && (dollar || looks_like_command(cmd_trim, true)) {
                    self.command(cmd_trim, start);
                }
            }
            if fence.is_none() {
                self.backticks(body, base);
                self.quoted_errors(body, base);
            }
        }
    }

    fn command(&mut self, cmd: &str, start: usize) {
        let cmd = cmd.trim_end_matches([',', ';']);
        if cmd.is_empty() || cmd.chars().count() > 200 {
            return;
        }
        self.items.push(Item::new(
            ItemClass::Command,
            cmd,
            norm_text(cmd),
            start..start + cmd.len(),
        ));
    }

    fn backticks(&mut self, line: &str, base: usize) {
        let mut rest = line;
        let mut pos = 0;
        while let Some(open) = rest.find('`') {
            if rest[open..].starts_with("``") {
                let skip = rest[open..].len() - rest[open..].trim_start_matches('`').len();
                pos += open + skip;
                rest = &rest[open + skip..];
                continue;
            }
            let after = &rest[open + 1..];
            let Some(close) = after.find('`') else { break };
            let inner = &after[..close];
            let inner_start = base + pos + open + 1;
            let t = inner.trim();
            if looks_like_command(t, false) {
                let s = inner_start + (inner.len() - inner.trim_start().len());
                self.command(t, s);
            }
            pos += open + 1 + close + 1;
            rest = &after[close + 1..];
        }
    }

    fn quoted_errors(&mut self, line: &str, base: usize) {
        let mut i = 0;
        while i < line.len() {
            let c = line[i..].chars().next().unwrap_or(' ');
            let close = match c {
                '"' => Some('"'),
                '“' => Some('”'),
                '\'' => Some('\''),
                '`' => Some('`'),
                _ => None,
            };
            let Some(close) = close else {
                i += c.len_utf8();
                continue;
            };
            // A single quote opens only at a word start (not in "don't").
            if c == '\''
                && line[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            {
                i += 1;
                continue;
            }
            let from = i + c.len_utf8();
            let Some(rel) = line[from..].find(close) else {
                break;
            };
            let mut end = from + rel;
            if close == '\'' {
                // The closing quote must end a word: skip apostrophes inside words.
                let mut search = from;
                let mut found = None;
                while let Some(r) = line[search..].find('\'') {
                    let at = search + r;
                    let next = line[at + 1..].chars().next();
                    if next.is_none_or(|n| !n.is_alphanumeric()) {
                        found = Some(at);
                        break;
                    }
                    search = at + 1;
                }
                match found {
                    Some(a) => end = a,
                    None => break,
                }
            }
            let inner = &line[from..end];
            self.quoted(line, inner, from, end, base);
            i = end + close.len_utf8();
        }
    }

    fn quoted(&mut self, line: &str, inner: &str, from: usize, end: usize, base: usize) {
        let t = inner.trim();
        let n = t.chars().count();
        if !(4..=160).contains(&n) || !t.chars().any(char::is_alphabetic) {
            return;
        }
        let single = !t.contains(char::is_whitespace);
        if single || looks_like_command(t, false) {
            return;
        }
        let words = |s: &str| -> bool {
            s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .any(|w| is_error_word(&w.to_lowercase()))
        };
        // The context: up to 80 characters either side, within the sentence.
        let mut window_start = floor_char(line, from.saturating_sub(80));
        if let Some(p) = [". ", "! ", "? "]
            .iter()
            .filter_map(|s| {
                line[window_start..floor_char(line, from.saturating_sub(1)).max(window_start)]
                    .rfind(s)
            })
            .max()
        {
            window_start += p + 2;
        }
        let mut window_end = ceil_char(line, (end + 80).min(line.len()));
        if let Some(p) = [". ", "! ", "? "]
            .iter()
            .filter_map(|s| line[end..window_end].find(s))
            .min()
        {
            window_end = end + p + 1;
        }
        let context = &line[window_start..window_end];
        if words(t) || words(context) {
            let s = base + from + (inner.len() - inner.trim_start().len());
            self.items.push(Item::new(
                ItemClass::QuotedError,
                t,
                norm_text(t),
                s..s + t.len(),
            ));
        }
    }

    /// Patterns spanning several tokens that start at token `i`.
    fn multi(&mut self, i: usize) {
        let core = self.toks[i].core;
        // Most tokens start no pattern: skip them without allocating.
        let first = core.as_bytes()[0];
        if !(first.is_ascii_alphanumeric()
            || matches!(first, b'$' | b'~' | b'+' | b'-')
            || first >= 0x80)
            || core.len() > 24
        {
            return;
        }
        // Lower case only for the short words that start a pattern.
        let l = if first.is_ascii_alphabetic() && core.len() <= 10 {
            core.to_ascii_lowercase()
        } else {
            String::new()
        };
        if self.multi_codes(i, &l) || self.multi_dates(i, core) {
            return;
        }
        // 3.5 GB, 250 ms, 12 percent
        if let Some((value, None)) = parse_number(core)
            && !self.toks[i].trailed
            && let Some(next) = self.toks.get(i + 1)
            && !next.hard_start
            && let Some(unit) = unit_alias(next.core, false)
        {
            let (key, base) = number_key(&value, Some(unit));
            self.push(ItemClass::Number, i, i + 1, key, base);
        }
    }

    /// `multi` for codes: an HTTP status, an exit status, an issue or pull request number.
    fn multi_codes(&mut self, i: usize, l: &str) -> bool {
        // HTTP 503, HTTP/1.1 503
        if (l == "http" || l == "https" || l.starts_with("http/"))
            && let Some(n) = self.toks.get(i + 1).map(|t| t.core)
            && http_status(n)
            && !self.claimed[i + 1]
        {
            self.push(
                ItemClass::ErrorCode,
                i,
                i + 1,
                format!("http:{n}"),
                Some(format!("num:{n}")),
            );
            return true;
        }
        // exit code 2, exited with 137, exit status 1, return code 3
        if (matches!(l, "exit" | "exited" | "exits" | "exiting" | "returncode")
            || (l == "return" && self.lc(i + 1).as_deref() == Some("code")))
            && !self.toks[i].trailed
        {
            let mut j = i + 1;
            while j < self.toks.len()
                && j <= i + 3
                && !self.toks[j].trailed
                && matches!(
                    self.lc(j).as_deref(),
                    Some("code" | "status" | "with" | "a" | "an" | "of" | "=")
                )
            {
                j += 1;
            }
            if let Some(t) = self.toks.get(j)
                && all_digits(t.core)
                && t.core.len() <= 3
                && !t.hard_start
            {
                let key = format!("exit:{}", t.core);
                self.push(ItemClass::ErrorCode, i, j, key, None);
                return true;
            }
        }
        // PR 45, PR #45, issue 12, pull request #45, MR !12
        let issue_word = matches!(l, "pr" | "mr" | "issue" | "issues" | "prs" | "ticket")
            || (l == "pull" && self.lc(i + 1).as_deref() == Some("request"));
        if issue_word {
            let j = if l == "pull" { i + 2 } else { i + 1 };
            if let Some(t) = self.toks.get(j) {
                let n = t.core.trim_start_matches(['#', '!']);
                if all_digits(n) && n.len() <= 7 && (l != "ticket" || t.core.starts_with('#')) {
                    let key = format!("#{n}");
                    self.push(ItemClass::Issue, i, j, key, None);
                    return true;
                }
            }
        }
        false
    }

    /// `multi` for dates and times: a weekday before a date, a month and day, a time with its zone.
    fn multi_dates(&mut self, i: usize, core: &str) -> bool {
        // Weekday before a date: one item, keyed by the date.
        if weekday(core) {
            let next = i + 1;
            let can_join = !self.toks[i].trailed || self.toks[i].raw.ends_with(',');
            if can_join && next < self.toks.len() && !self.toks[next].hard_start {
                if let Some((key, base)) = iso_date(self.toks[next].core) {
                    self.push(ItemClass::Date, i, next, key, base);
                    return true;
                }
                if let Some((to, key, base)) = self.month_date(next) {
                    self.push(ItemClass::Date, i, to, key, base);
                    return true;
                }
            }
            if core.chars().next().is_some_and(char::is_uppercase)
                && let Some(key) = weekday_key(core)
            {
                self.push(ItemClass::Date, i, i, key, None);
            }
            return true;
        }
        if let Some((to, key, base)) = self.month_date(i) {
            self.push(ItemClass::Date, i, to, key, base);
            return true;
        }
        // 14 March [2026]
        if all_digits(core)
            && core.len() <= 2
            && core.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
            && let Some(m) = self.toks.get(i + 1)
            && !self.toks[i].trailed
            && m.core.chars().next().is_some_and(char::is_uppercase)
            && let Some(mi) = month_index(m.core)
        {
            let month = MONTHS[mi].0;
            if let Some(y) = self.toks.get(i + 2)
                && is_year(y.core)
                && !m.trailed
            {
                let key = format!("{month} {core} {}", y.core);
                self.push(
                    ItemClass::Date,
                    i,
                    i + 2,
                    key,
                    Some(format!("{month} {core}")),
                );
            } else {
                self.push(ItemClass::Date, i, i + 1, format!("{month} {core}"), None);
            }
            return true;
        }
        // Times with a zone or am/pm: 14:05 UTC, 9:30pm, 3 pm
        let next_lc = self
            .toks
            .get(i + 1)
            .filter(|n| !n.hard_start && !self.toks[i].trailed)
            .map(|n| n.core.to_ascii_lowercase());
        let ampm = |w: &str| matches!(w, "am" | "pm" | "a.m" | "p.m");
        let bare_hour = all_digits(core)
            && core.parse::<u32>().is_ok_and(|h| (1..=12).contains(&h))
            && next_lc.as_deref().is_some_and(ampm);
        let time = time_of(core);
        if time.is_some() || bare_hour {
            let time = time.unwrap_or_else(|| core.to_string());
            let (mut to, mut key, mut base) = (i, time.clone(), None);
            if let Some(next) = next_lc {
                if ampm(&next) && !time.ends_with('m') {
                    to = i + 1;
                    key = format!("{time}{}", next.replace('.', ""));
                } else if TIMEZONES.contains(&next.as_str())
                    || (next.starts_with("utc") && next.len() > 3)
                {
                    to = i + 1;
                    base = Some(time.clone());
                    key = format!("{time} {next}");
                }
            }
            self.push(ItemClass::Date, i, to, key, base);
            return true;
        }
        false
    }

    /// `March 14`, `Mar 14, 2026`, `March 2026` starting at token `i`: (last token, key, base).
    fn month_date(&self, i: usize) -> Option<(usize, String, Option<String>)> {
        let m = self.toks.get(i)?;
        let mi = month_index(m.core)?;
        if !m.core.chars().next().is_some_and(char::is_uppercase) {
            return None;
        }
        let month = MONTHS[mi].0;
        let d = self.toks.get(i + 1)?;
        if d.hard_start || m.trailed {
            return None;
        }
        let day = d
            .core
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .to_string();
        let suffix_ok = d.core.len() == day.len() || is_ordinal(d.core);
        if all_digits(&day)
            && day.len() <= 2
            && suffix_ok
            && day.parse::<u32>().is_ok_and(|v| (1..=31).contains(&v))
        {
            let day = day.trim_start_matches('0').to_string();
            if let Some(y) = self.toks.get(i + 2)
                && is_year(y.core)
                && !y.hard_start
            {
                return Some((
                    i + 2,
                    format!("{month} {day} {}", y.core),
                    Some(format!("{month} {day}")),
                ));
            }
            return Some((i + 1, format!("{month} {day}"), None));
        }
        if is_year(d.core) {
            return Some((i + 1, format!("{month} {}", d.core), None));
        }
        None
    }

    fn single(&mut self, i: usize) {
        let t = self.toks[i];
        let w = t.core;
        // A plain lower-case word is none of the classes below (each needs a digit, an upper-case
        // letter, or punctuation): most tokens stop here.
        if w.bytes().all(|b| b.is_ascii_lowercase()) {
            return;
        }
        // list numbering ("1." at a line start) is layout, not a number
        if t.line_start && is_list_number(t.raw) {
            return;
        }
        // KEY=VALUE, ranges (1–13, 09:00-12:00): classify the parts.
        for sep in ['=', '–', '—'] {
            if w.contains(sep) && !is_url(w) {
                self.parts(i, sep);
                return;
            }
        }
        if is_url(w) {
            let key = w.to_ascii_lowercase().trim_end_matches('/').to_string();
            self.push(ItemClass::Url, i, i, key, None);
            return;
        }
        if is_email(w) {
            self.push(ItemClass::Email, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if let Some(key) = issue_single(w) {
            self.push(ItemClass::Issue, i, i, key, None);
            return;
        }
        if let Some((key, base)) = iso_date(w) {
            self.push(ItemClass::Date, i, i, key, base);
            return;
        }
        if slash_date(w) || is_year(w) {
            self.push(ItemClass::Date, i, i, w.to_string(), None);
            return;
        }
        if let Some(time) = time_of(w) {
            self.push(ItemClass::Date, i, i, time, None);
            return;
        }
        if let Some(p) = path_of(w) {
            let (at, _) = self.span(i, i);
            let key = p.trim_end_matches('/').to_lowercase();
            self.items.push(Item::new(
                ItemClass::Path,
                p,
                key,
                at.start..at.start + p.len(),
            ));
            self.claim(i, i);
            return;
        }
        if error_code_single(w) {
            self.push(ItemClass::ErrorCode, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if http_status(w) && self.http_context(i) {
            self.push(
                ItemClass::ErrorCode,
                i,
                i,
                format!("http:{w}"),
                Some(format!("num:{w}")),
            );
            return;
        }
        if is_uuid(w) || is_hex_id(w) || is_ticket_key(w) || is_version(w) || is_ipv4(w) {
            self.push(ItemClass::Identifier, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if let Some((value, unit)) = parse_number(w) {
            let prev = i.checked_sub(1).and_then(|p| self.lc(p));
            let turn_number = matches!(prev.as_deref(), Some("turn" | "turns"));
            if (unit.is_some() || !is_small_count(&value)) && !turn_number {
                let (key, base) = number_key(&value, unit.as_deref());
                self.push(ItemClass::Number, i, i, key, base);
            }
            return;
        }
        // host:port → the port is a number
        if let Some((host, port)) = w.rsplit_once(':')
            && all_digits(port)
            && port.len() >= 2
            && port.len() <= 5
            && host.chars().next().is_some_and(char::is_alphabetic)
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        {
            let s = t.start + host.len() + 1;
            self.items.push(Item::new(
                ItemClass::Number,
                port,
                format!("num:{port}"),
                s..s + port.len(),
            ));
            self.claim(i, i);
            return;
        }
        if is_code_identifier(w) {
            self.push(ItemClass::Identifier, i, i, w.to_ascii_lowercase(), None);
        }
    }

    /// Classify the parts of a token split at `sep`, as if each were a token of its own.
    fn parts(&mut self, i: usize, sep: char) {
        let t = self.toks[i];
        let prev = i.checked_sub(1).and_then(|p| self.lc(p));
        if matches!(prev.as_deref(), Some("turn" | "turns")) {
            self.claim(i, i);
            return;
        }
        let mut offset = t.start;
        let mut items = Vec::new();
        for part in t.core.split(sep) {
            let (lead, core, _) = trim_core(part);
            if !core.is_empty() {
                let sub = Extractor {
                    text: self.text,
                    toks: vec![Tok {
                        core,
                        start: offset + lead,
                        end: offset + lead + core.len(),
                        raw_start: offset,
                        raw: part,
                        sentence_start: false,
                        hard_start: false,
                        line_start: false,
                        trailed: false,
                    }],
                    claimed: vec![false],
                    items: Vec::new(),
                };
                let mut sub = sub;
                sub.single(0);
                items.extend(sub.items);
            }
            offset += part.len() + sep.len_utf8();
        }
        self.items.extend(items);
        self.claim(i, i);
    }

    fn http_context(&self, i: usize) -> bool {
        const BEFORE: &[&str] = &[
            "http",
            "status",
            "code",
            "returned",
            "returns",
            "returning",
            "return",
            "got",
            "gets",
            "getting",
            "throws",
            "threw",
            "responded",
            "responds",
            "response",
            "error",
        ];
        let prev = |k: usize| i.checked_sub(k).and_then(|p| self.lc(p));
        let p1 = prev(1);
        let p2 = prev(2);
        if p1.as_deref().is_some_and(|p| BEFORE.contains(&p)) {
            return true;
        }
        if matches!(p1.as_deref(), Some("a" | "an" | "the"))
            && p2.as_deref().is_some_and(|p| BEFORE.contains(&p))
        {
            return true;
        }
        let n1 = self.lc(i + 1);
        let n2 = self.lc(i + 2);
        matches!(
            (n1.as_deref(), n2.as_deref()),
            (
                Some("error" | "errors" | "response" | "responses" | "status" | "ok"),
                _
            ) | (Some("not"), Some("found" | "modified" | "acceptable"))
                | (Some("bad"), Some("request" | "gateway"))
                | (Some("internal"), Some("server"))
                | (Some("service"), Some("unavailable"))
                | (Some("gateway"), Some("timeout"))
                | (Some("too"), Some("many"))
                | (Some("no"), Some("content"))
                | (
                    Some(
                        "unauthorized"
                            | "forbidden"
                            | "conflict"
                            | "created"
                            | "accepted"
                            | "unprocessable"
                            | "gone",
                    ),
                    _,
                )
        )
    }

    /// Runs of capitalised words.
    fn names(&mut self) {
        let n = self.toks.len();
        let mut i = 0;
        while i < n {
            if self.claimed[i] || !is_name_word(self.toks[i].core) {
                i += 1;
                continue;
            }
            let mut j = i;
            loop {
                if !self.joined(j) || j + 1 >= n {
                    break;
                }
                let next = self.toks[j + 1];
                if !self.claimed[j + 1] && is_name_word(next.core) {
                    j += 1;
                    continue;
                }
                // "Bank of America", "Ludwig van Beethoven"
                if NAME_CONNECTORS.contains(&next.core)
                    && self.joined(j + 1)
                    && j + 2 < n
                    && !self.claimed[j + 2]
                    && is_name_word(self.toks[j + 2].core)
                {
                    j += 2;
                    continue;
                }
                break;
            }
            let single_at_start = j == i && self.toks[i].sentence_start;
            if !single_at_start {
                let (at, text) = self.span(i, j);
                let key = lower(&text.split_whitespace().collect::<Vec<_>>().join(" "));
                self.items.push(Item::new(ItemClass::Name, text, key, at));
                self.claim(i, j);
            }
            i = j + 1;
        }
    }
}

pub(super) fn floor_char(s: &str, i: usize) -> usize {
    text::floor(s, i)
}

pub(super) fn ceil_char(s: &str, i: usize) -> usize {
    text::ceil(s, i)
}

pub(super) fn http_status(w: &str) -> bool {
    w.len() == 3 && all_digits(w) && w.parse::<u32>().is_ok_and(|v| (100..=599).contains(&v))
}

pub(super) fn looks_like_command(s: &str, line: bool) -> bool {
    if s.is_empty() || s.chars().count() > 200 || s.contains('\n') {
        return false;
    }
    let mut words: Vec<&str> = s.split_whitespace().collect();
    // Environment assignments and sudo in front of the program.
    while words
        .first()
        .is_some_and(|w| w.contains('=') && !w.starts_with('-') && !w.starts_with('='))
    {
        words.remove(0);
    }
    if words.first() == Some(&"sudo") {
        words.remove(0);
    }
    let Some(first) = words.first() else {
        return false;
    };
    if first.starts_with("./") || first.starts_with("../") || first.starts_with("~/") {
        return first.len() > 2;
    }
    if !COMMANDS.contains(first) {
        return false;
    }
    if AMBIGUOUS_COMMANDS.contains(first) {
        return words.len() >= 2
            && words[1..].iter().any(|w| {
                w.starts_with('-') || w.contains('/') || w.contains('.') || w.contains('*')
            });
    }
    line || words.len() >= 2
}

/// The items of prose text (a message, a tool result, a summary).
pub fn extract(text: &str) -> Vec<Item> {
    let toks = tokenize(text);
    let claimed = vec![false; toks.len()];
    Extractor {
        text,
        toks,
        claimed,
        items: Vec::new(),
    }
    .run()
}

/// One argument value of a tool call and its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// The argument's name (the innermost key).
    pub key: String,
    /// The value as text (a string verbatim, a number as written).
    pub value: String,
    pub items: Vec<Item>,
}

/// The argument values of a tool call, in order, each with its items.
///
/// JSON arguments are walked: a string under a command key (`cmd`, `command`, …) is a command
/// (and its paths are items too); other strings are read as prose, and a string that is only a
/// name (`"Dana Kim"`) is a name; numbers of two or more digits are numbers. Arguments that are
/// not JSON are read as prose.
pub fn call_leaves(args: &str) -> Vec<Leaf> {
    fn walk(v: &Value, key: &str, out: &mut Vec<Leaf>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    walk(v, k, out);
                }
            }
            Value::Array(a) => {
                if COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str())
                    && a.iter().all(Value::is_string)
                {
                    let joined: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                    walk(&Value::String(joined.join(" ")), key, out);
                    return;
                }
                for v in a {
                    walk(v, key, out);
                }
            }
            Value::String(s) => {
                let mut items = Vec::new();
                let s_trim = s.trim();
                if COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str())
                    && !s_trim.is_empty()
                    && s_trim.chars().count() <= 300
                {
                    let first_line = s_trim.lines().next().unwrap_or("");
                    let cmd = if s_trim.contains('\n') {
                        first_line
                    } else {
                        s_trim
                    };
                    items.push(Item::new(ItemClass::Command, cmd, norm_text(cmd), 0..0));
                }
                // A command's items are those of its first line: what follows (a heredoc, a
                // script) is a body, like a file's content.
                let is_command = !items.is_empty();
                let mut inner = if is_command && s_trim.contains('\n') {
                    extract(s_trim.lines().next().unwrap_or(""))
                } else {
                    extract(s)
                };
                if inner.is_empty() && items.is_empty() {
                    let words: Vec<&str> = s_trim.split_whitespace().collect();
                    if (1..=4).contains(&words.len())
                        && words.iter().all(|w| {
                            let c = w.trim_end_matches(['.', ',']);
                            c.chars().next().is_some_and(char::is_uppercase)
                                && c.chars().any(char::is_lowercase)
                                && c.chars()
                                    .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-'))
                        })
                        && !words.iter().any(|w| NAME_STOP.contains(&lower(w).as_str()))
                    {
                        inner.push(Item::new(ItemClass::Name, s_trim, lower(s_trim), 0..0));
                    }
                }
                if is_parameter_key(key) && s_trim.chars().all(|c| c.is_ascii_digit()) {
                    // `"limit": "400"`, as some agents write it: the same parameter.
                    inner.retain(|it| it.class != ItemClass::Number);
                }
                items.extend(inner);
                if !items.is_empty() {
                    out.push(Leaf {
                        key: key.to_string(),
                        value: s.clone(),
                        items,
                    });
                }
            }
            Value::Number(n) => {
                let text = n.to_string();
                if let Some((value, unit)) = parse_number(&text)
                    && !is_small_count(&value)
                    && !is_parameter_key(key)
                {
                    let (k, base) = number_key(&value, unit.as_deref());
                    out.push(Leaf {
                        key: key.to_string(),
                        value: text.clone(),
                        items: vec![Item::new(ItemClass::Number, &text, k, 0..0).with_base(base)],
                    });
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut out = Vec::new();
    match serde_json::from_str::<Value>(args) {
        Ok(v) => walk(&v, "", &mut out),
        Err(_) => {
            let items = extract(args);
            if !items.is_empty() {
                out.push(Leaf {
                    key: String::new(),
                    value: args.to_string(),
                    items,
                });
            }
        }
    }
    out
}

/// A key of [`PARAMETER_KEYS`], in any case (no allocation: it runs for every argument).
fn is_parameter_key(key: &str) -> bool {
    PARAMETER_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

/// Split `[calls name(args)]` into name and arguments.
pub fn parse_call(text: &str) -> Option<(&str, &str)> {
    let body = text.trim().strip_prefix("[calls ")?.strip_suffix(")]")?;
    let open = body.find('(')?;
    Some((&body[..open], &body[open + 1..]))
}

//! Text cut at byte offsets without cutting a character: every slice of a `&str` at a computed
//! offset (a length limit, a fixed-width prefix, a position found in another string) goes
//! through these, so no input can make mf slice inside a multi-byte character and panic.
//!
//! (`str::floor_char_boundary` is stable only from Rust 1.91; mf builds on 1.89.)

/// The largest character boundary of `s` at or before `i` (`s.len()` when `i` is past the end).
pub fn floor(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `s` at or after `i` (`s.len()` when `i` is past the end).
pub fn ceil(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn prefix(s: &str, max: usize) -> &str {
    &s[..floor(s, max)]
}

/// The longest suffix of `s` of at most `max` bytes that starts on a character boundary.
pub fn suffix(s: &str, max: usize) -> &str {
    &s[ceil(s, s.len().saturating_sub(max))..]
}

/// `s` from byte `i` on, `i` moved forward to a character boundary (empty past the end).
pub fn from(s: &str, i: usize) -> &str {
    &s[ceil(s, i)..]
}

/// Whether `s` starts with `head`, ASCII case ignored (false when `s` is shorter or the cut
/// falls inside a character).
pub fn starts_with_ignore_ascii_case(s: &str, head: &str) -> bool {
    s.get(..head.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(head))
}

/// Whether `s` ends with `tail`, ASCII case ignored.
pub fn ends_with_ignore_ascii_case(s: &str, tail: &str) -> bool {
    s.len() >= tail.len()
        && s.get(s.len() - tail.len()..)
            .is_some_and(|t| t.eq_ignore_ascii_case(tail))
}

/// `n` and its noun, singular for one (`1 line`, `2 lines`); `plural` is the noun for others.
pub fn count(n: usize, one: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { plural })
}

/// A span of turns for people: `turn 4` for one, `turns 2–7` for several.
pub fn turn_span<T: std::fmt::Display + PartialEq>(from: T, to: T) -> String {
    if from == to {
        format!("turn {from}")
    } else {
        format!("turns {from}–{to}")
    }
}

/// A size in bytes as people read it (`1 GiB`, `1000 bytes`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    for (unit, size) in UNITS {
        if n >= size {
            return format!("{:.1} {unit}", n as f64 / size as f64);
        }
    }
    format!("{n} bytes")
}

/// A bound as people read it, with its exact bytes when the unit rounds them
/// (`1 GiB`, `1000 bytes`, `1.5 KiB (1536 bytes)`).
pub fn bound(n: u64) -> String {
    let h = human_bytes(n);
    if h.contains('.') {
        format!("{h} ({n} bytes)")
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_fall_inside_a_character() {
        let s = "1031→{\"a\":1} é😀中";
        for i in 0..=s.len() + 2 {
            assert!(s.is_char_boundary(floor(s, i)) && floor(s, i) <= i.max(s.len()));
            assert!(s.is_char_boundary(ceil(s, i)) && ceil(s, i) >= i.min(s.len()));
            assert!(prefix(s, i).len() <= i);
            assert!(suffix(s, i).len() <= i);
            let _ = from(s, i);
        }
        assert_eq!(prefix("1031→a", 5), "1031");
        assert_eq!(prefix("1031→a", 7), "1031→");
        assert_eq!(suffix("a→b", 3), "b");
        assert_eq!(from("a→b", 2), "b");
        assert!(!starts_with_ignore_ascii_case("1031→{", "jdbc:"));
        assert!(starts_with_ignore_ascii_case("JDBC:x", "jdbc:"));
        assert!(!starts_with_ignore_ascii_case("jd", "jdbc:"));
        assert!(ends_with_ignore_ascii_case("A.RS", ".rs"));
        assert!(!ends_with_ignore_ascii_case("→s", ".rs"));
    }
}

//! Whole-text questions Python asks with several passes of its own: the lines that hold a
//! marker (`hloscope stats` reads every line with a `/*` comment), and the first bracket
//! nested deeper than a limit (`hloscope.parser.text.nesting_beyond`).

/// The lines holding `needle`, each once, in order: (1-based line number, the line's text
/// without its `\n`). A `needle` empty or holding a line break is on no line.
pub fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<(usize, &'a str)> {
    if needle.is_empty() || needle.contains('\n') {
        return Vec::new();
    }
    let b = text.as_bytes();
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut out = Vec::new();
    let (mut from, mut line, mut counted) = (0usize, 1usize, 0usize);
    while let Some(k) = finder.find(&b[from..]) {
        let at = from + k;
        let start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1);
        line += memchr::memchr_iter(b'\n', &b[counted..start]).count();
        counted = start;
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        out.push((line, &text[start..end]));
        from = end;
    }
    out
}

/// The character offset of the first bracket (any of `([{`) that opens deeper than `limit`
/// levels, or None: brackets inside strings count too, and a closer with nothing open counts
/// for nothing (a bound, as the Python walk it stands for).
pub fn nesting_beyond(s: &str, limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(if s.is_ascii() {
                        i
                    } else {
                        s[..i].chars().count()
                    });
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_a_marker() {
        let text = "a /* x */ /* y */\nb\n/*c*/\nd /*";
        assert_eq!(
            lines_with(text, "/*"),
            vec![(1, "a /* x */ /* y */"), (3, "/*c*/"), (4, "d /*")]
        );
        assert_eq!(lines_with("none here\n", "/*"), vec![]);
        assert_eq!(lines_with("/*\n\n\n/*\n", "/*"), vec![(1, "/*"), (4, "/*")]);
        assert_eq!(lines_with("a\nb", ""), vec![]);
        assert_eq!(lines_with("a\nb", "a\nb"), vec![]);
    }

    #[test]
    fn nesting() {
        assert_eq!(nesting_beyond("((()))", 3), None);
        assert_eq!(nesting_beyond("((()))", 2), Some(2));
        assert_eq!(nesting_beyond("[{(", 2), Some(2));
        assert_eq!(nesting_beyond(")))((", 1), Some(4));
        assert_eq!(nesting_beyond("é((", 1), Some(2)); // (characters, not bytes)
    }
}

//! Terminal escape sequences in a program's output: colours, cursor moves, titles, hyperlinks. A command's output goes
//! to the model and the screen without them (`strip`): to the model they are noise that costs tokens, and on the
//! screen `clean` would show each as `␛[31m` text. The text between them stays, every character of it; carriage
//! returns and other control characters are left for `clean` to show.

use std::borrow::Cow;

const ESC: char = '\u{1b}';
/// The 8-bit CSI, which a terminal reads as `ESC [`.
const C1_CSI: char = '\u{9b}';
/// The 8-bit OSC and string introducers (DCS, SOS, PM, APC).
const C1_STRINGS: [char; 5] = ['\u{9d}', '\u{90}', '\u{98}', '\u{9e}', '\u{9f}'];
const BEL: char = '\u{7}';
/// The 8-bit string terminator.
const C1_ST: char = '\u{9c}';

/// `text` without its escape sequences: CSI (`ESC [ … final`), OSC and the other strings (`ESC ] … BEL` or `ESC \`,
/// DCS, SOS, PM, APC), their 8-bit forms, and two-character escapes (`ESC 7`, `ESC ( B`). A sequence cut off by the end
/// of `text` is dropped too. Borrowed when there is none.
pub fn strip(text: &str) -> Cow<'_, str> {
    if !text.contains([ESC, C1_CSI]) && !text.contains(C1_STRINGS) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ESC => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // `ESC ( B` and its kin take one more character.
                Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%' | ' ') => {
                    chars.next();
                }
                Some(_) | None => {}
            },
            C1_CSI => skip_csi(&mut chars),
            c if C1_STRINGS.contains(&c) => skip_string(&mut chars),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Skips a CSI's parameters and intermediates up to its final character (`@` to `~`).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        // A character that cannot be part of a CSI ends it and stays (a broken sequence must not swallow the text
        // after it).
        if !('\u{20}'..='\u{7e}').contains(&c) {
            return;
        }
        chars.next();
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
    }
}

/// Skips a string up to its terminator: BEL, `ESC \` or the 8-bit ST.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            BEL | C1_ST => return,
            ESC => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_moves_titles_and_links_go_and_the_text_stays() {
        let cases = [
            ("plain text\n", "plain text\n"),
            ("\u{1b}[1;31merror\u{1b}[0m: failed", "error: failed"),
            ("\u{1b}[2K\u{1b}[1A✓ done", "✓ done"),
            ("\u{1b}]0;title\u{7}after", "after"),
            ("\u{1b}]8;;https://x.example\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
            ("\u{1b}(Bok\u{1b}7", "ok"),
            ("\u{9b}31mred\u{9b}0m", "red"),
            ("\u{1b}P$q m\u{1b}\\rest", "rest"),
            ("cut \u{1b}[3", "cut "),
            ("progress 10%\r\u{1b}[Kprogress 20%", "progress 10%\rprogress 20%"),
        ];
        for (given, left) in cases {
            assert_eq!(strip(given), left, "{given:?}");
        }
        assert!(matches!(strip("nothing to do"), Cow::Borrowed(_)));
    }

    /// A broken CSI ends at the first character a CSI cannot hold, so the text after it is not swallowed.
    #[test]
    fn a_broken_sequence_keeps_the_text_after_it() {
        assert_eq!(strip("\u{1b}[12\nnext line"), "\nnext line");
        assert_eq!(strip("a\u{1b}[é b"), "aé b");
    }
}

//! Writing a line of styled text into one row of a frame, as `Paragraph` (without wrapping) would, with less work:
//! the transcript, the status bar and the composer's placeholder are drawn this way every frame.

use ratatui::layout::Rect;
use ratatui::text::Line;

/// Writes `line` on row `row` of `area`, cut at its width and placed by its alignment, as `Paragraph` (without
/// wrapping) draws it.
pub(crate) fn put_line(buf: &mut ratatui::buffer::Buffer, area: Rect, row: u16, line: &Line<'_>) {
    // Only the part of `area` inside the buffer, as `Paragraph` draws.
    let area = area.intersection(buf.area);
    if row >= area.height || area.width == 0 {
        return;
    }
    let offset = match line.alignment {
        Some(ratatui::layout::Alignment::Center) | Some(ratatui::layout::Alignment::Right) => {
            let free = area
                .width
                .saturating_sub(u16::try_from(line.width()).unwrap_or(u16::MAX));
            if line.alignment == Some(ratatui::layout::Alignment::Center) {
                free / 2
            } else {
                free
            }
        }
        _ => 0,
    };
    set_line(buf, area.x + offset, area.y + row, line, area.width - offset);
}

/// `Buffer::set_line`, with a span of printable ASCII (most of a transcript) written a byte a cell: ratatui splits
/// every span into graphemes and measures each, which was a tenth of the CPU of a streaming frame.
pub(crate) fn set_line(buf: &mut ratatui::buffer::Buffer, mut x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    let mut remaining = max_width;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let text = span.content.as_ref();
        if !text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            let end = buf.set_stringn(x, y, text, usize::from(remaining), style).0;
            remaining = remaining.saturating_sub(end.saturating_sub(x));
            x = end;
            continue;
        }
        let room = usize::from(remaining.min(buf.area.right().saturating_sub(x)));
        if room == 0 {
            break;
        }
        let n = text.len().min(room);
        let at = buf.index_of(x, y);
        for (cell, b) in buf.content[at..at + n].iter_mut().zip(text.bytes()) {
            cell.set_char(char::from(b)).set_style(style);
        }
        x += n as u16;
        remaining -= n as u16;
    }
}

/// A row's line as bytes: what `put_line` draws from it (alignment, styles, text), so two rows with the same bytes
/// at the same place and width show the same cells.
pub(crate) fn encode(line: &Line<'_>, out: &mut Vec<u8>) {
    // A style in 16 bytes: each colour in 27 bits (`color_code`'s 26, or bit 26 alone for none), each set of
    // modifiers in its 12 (ratatui uses 9).
    const _: () = assert!(
        ratatui::style::Modifier::all().bits() <= 0xfff,
        "modifiers take more than 12 bits"
    );
    fn style(style: ratatui::style::Style, out: &mut Vec<u8>) {
        let color = |c: Option<ratatui::style::Color>| c.map_or(1 << 26, crate::screen::color_code);
        let modifiers = |m: ratatui::style::Modifier| u64::from(m.bits());
        let first = color(style.fg) | color(style.bg) << 27 | (modifiers(style.add_modifier) & 0x3ff) << 54;
        let second = color(style.underline_color)
            | modifiers(style.sub_modifier) << 27
            | modifiers(style.add_modifier) >> 10 << 39;
        out.extend_from_slice(&first.to_le_bytes());
        out.extend_from_slice(&second.to_le_bytes());
    }
    out.push(match line.alignment {
        None => 0,
        Some(ratatui::layout::Alignment::Left) => 1,
        Some(ratatui::layout::Alignment::Center) => 2,
        Some(ratatui::layout::Alignment::Right) => 3,
    });
    style(line.style, out);
    for span in &line.spans {
        style(span.style, out);
        out.extend_from_slice(&(span.content.len() as u32).to_le_bytes());
        out.extend_from_slice(span.content.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};
    use ratatui::text::{Line, Span};

    #[test]
    fn lines_are_written_as_ratatui_writes_them() {
        let red = Style::default().fg(Color::Red);
        let lines = [
            Line::from("plain ascii text"),
            Line::from(vec![
                Span::styled("bold ", red.add_modifier(Modifier::BOLD)),
                Span::raw("then plain"),
            ]),
            Line::from(vec![Span::raw("wide 漢字 and "), Span::styled("é, emoji 👍🏽", red)]),
            Line::from("tab\there, a bell \u{7} and a newline\n inside"),
            Line::from("a line much longer than the area it is written into, cut at its width").style(red),
            Line::from(vec![
                Span::raw("ascii "),
                Span::raw("字字字字字字字字字字字字字字字字字字字字字"),
                Span::raw(" after"),
            ]),
            Line::from(""),
            Line::from(vec![
                Span::raw("⠿ "),
                Span::raw(""),
                Span::raw("after an empty span"),
                Span::raw(""),
            ]),
        ];
        let area = Rect::new(0, 0, 30, 1);
        for line in &lines {
            for (x, width) in [(0, 30), (3, 20), (29, 1), (30, 5), (0, 0)] {
                let mut ours = Buffer::filled(area, ratatui::buffer::Cell::new("x"));
                let mut theirs = ours.clone();
                super::set_line(&mut ours, x, 0, line, width);
                if x < area.right() {
                    theirs.set_line(x, 0, line, width);
                }
                assert_eq!(ours, theirs, "{line:?} at {x} in {width}");
            }
        }
    }
}

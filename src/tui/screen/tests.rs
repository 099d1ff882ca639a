//! `Screen` against ratatui's `TestBackend`, which models what a terminal does with the writes and scroll regions
//! it is given: after every frame the modelled terminal must show exactly the frame.

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use unicode_width::UnicodeWidthStr;

use super::{Screen, Shift, best_shift, row_hashes};

const W: u16 = 30;
const H: u16 = 12;

/// A frame: a status row at the top, `lines` of a transcript from `top` in rows 1..H-2, an input row at the bottom.
fn frame(lines: &[String], top: usize, status: &str) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, W, H));
    buf.set_string(0, 0, status, Style::default().fg(Color::Yellow));
    for (row, line) in lines.iter().skip(top).take(H as usize - 2).enumerate() {
        let style = if line.starts_with('#') {
            Style::default().fg(Color::Cyan).bg(Color::Rgb(10, 20, 30))
        } else {
            Style::default()
        };
        buf.set_string(0, 1 + row as u16, line, style);
    }
    buf.set_string(0, H - 1, "> ask tern", Style::default().fg(Color::Gray));
    buf
}

fn lines(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            if i % 7 == 0 {
                format!("# heading {i}")
            } else {
                format!("line {i} of the answer, wide 好")
            }
        })
        .collect()
}

/// What a person sees: each row's symbols with their colours and modifiers, leaving out the cells a wide symbol
/// covers (neither ratatui nor `Screen` writes those, so the terminal keeps whatever they held).
fn visible(buf: &Buffer) -> Vec<Vec<(String, Color, Color, u16)>> {
    let width = buf.area.width as usize;
    buf.content
        .chunks(width)
        .map(|row| {
            let mut out = Vec::new();
            let mut covered = 0;
            for cell in row {
                if covered > 0 {
                    covered -= 1;
                    continue;
                }
                covered = cell.symbol().width().saturating_sub(1);
                out.push((cell.symbol().to_string(), cell.fg, cell.bg, cell.modifier.bits()));
            }
            out
        })
        .collect()
}

/// Presents the frames in order; after each the terminal shows it.
fn show(frames: &[Buffer]) {
    let mut screen = Screen::new(TestBackend::new(W, H));
    for (n, f) in frames.iter().enumerate() {
        screen.present(f.clone(), None).unwrap();
        assert_eq!(
            visible(screen.inner.buffer()),
            visible(f),
            "frame {n} is on the terminal as it was drawn"
        );
    }
}

#[test]
fn a_transcript_that_moves_up_is_scrolled_and_the_screen_ends_as_each_frame() {
    let text = lines(60);
    let frames: Vec<Buffer> = [0, 1, 2, 5, 9, 9, 20, 21, 40, 48]
        .iter()
        .enumerate()
        .map(|(n, &top)| frame(&text, top, &format!("streaming {n}")))
        .collect();
    show(&frames);
}

#[test]
fn moving_down_and_jumps_further_than_the_view_come_out_right_too() {
    let text = lines(80);
    let frames: Vec<Buffer> = [40, 39, 35, 36, 0, 70, 3, 3]
        .iter()
        .map(|&top| frame(&text, top, "browsing"))
        .collect();
    show(&frames);
}

#[test]
fn a_scroll_is_found_for_a_band_that_moved_and_not_for_one_that_stayed() {
    let text = lines(40);
    let before = row_hashes(&frame(&text, 4, "s"));
    let after = row_hashes(&frame(&text, 6, "s"));
    // The transcript rows 1..=10 move up by two: rows 3..=10 come out right, 9 and 10 are written.
    assert_eq!(
        best_shift(&before, &after),
        Some(Shift {
            region: 1..11,
            by: 2,
            up: true
        })
    );
    assert_eq!(best_shift(&before, &before), None, "nothing moved");
    let down = row_hashes(&frame(&text, 3, "s"));
    assert_eq!(
        best_shift(&before, &down),
        Some(Shift {
            region: 1..11,
            by: 1,
            up: false
        })
    );
}

#[test]
fn a_scrolled_frame_writes_only_its_new_lines() {
    let text = lines(40);
    let mut screen = Screen::new(TestBackend::new(W, H));
    screen.present(frame(&text, 0, "s"), None).unwrap();
    // After a scroll by one, the diff against what the terminal shows holds only the new bottom line.
    let next = frame(&text, 1, "s");
    let shift = best_shift(&screen.shown_rows, &row_hashes(&next)).expect("a scroll");
    screen.next = next.clone();
    let changed: std::collections::BTreeSet<u16> = screen
        .changes(Some(&shift), None, &mut vec![None; H as usize])
        .iter()
        .map(|&(_, y, _)| y)
        .collect();
    assert_eq!(changed, [H - 2].into_iter().collect(), "only the line that came in");
    screen.present(next.clone(), None).unwrap();
    assert_eq!(visible(screen.inner.buffer()), visible(&next));
}

#[test]
fn a_clear_or_a_new_size_writes_the_whole_frame_again() {
    use ratatui::backend::Backend;
    let text = lines(30);
    let mut screen = Screen::new(TestBackend::new(W, H));
    screen.present(frame(&text, 0, "s"), None).unwrap();
    screen.clear().unwrap();
    screen.present(frame(&text, 1, "s"), None).unwrap();
    assert_eq!(visible(screen.inner.buffer()), visible(&frame(&text, 1, "s")));
    // A terminal of another size: the frame is laid out for it and written whole.
    screen.inner.resize(W + 10, H);
    let mut wide = Buffer::empty(Rect::new(0, 0, W + 10, H));
    wide.set_string(2, 3, "wider now", Style::default());
    screen.present(wide.clone(), None).unwrap();
    assert_eq!(visible(screen.inner.buffer()), visible(&wide));
}

#[test]
fn the_cursor_goes_where_the_frame_asked_after_the_cells_are_written() {
    use ratatui::backend::Backend;
    let text = lines(30);
    let mut screen = Screen::new(TestBackend::new(W, H));
    screen.show_cursor().unwrap();
    screen.set_cursor_position((4, H - 1)).unwrap();
    screen.present(frame(&text, 0, "s"), None).unwrap();
    assert_eq!(screen.inner.get_cursor_position().unwrap(), (4, H - 1).into());
    screen.inner.assert_cursor_position((4, H - 1));
}

#[test]
fn frames_drawn_through_a_terminal_trade_buffers_and_come_out_right() {
    use ratatui::Terminal;
    let text = lines(70);
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    for (n, top) in [0usize, 1, 3, 3, 10, 9, 30, 31, 32, 0].into_iter().enumerate() {
        let want = frame(&text, top, &format!("frame {n}"));
        super::draw(&mut terminal, None, |f, _| {
            for (cell, want) in f.buffer_mut().content.iter_mut().zip(&want.content) {
                *cell = want.clone();
            }
            f.set_cursor_position((2, H - 1));
        })
        .unwrap();
        let screen = terminal.backend_mut();
        assert_eq!(visible(screen.inner.buffer()), visible(&want), "frame {n}");
        screen.inner.assert_cursor_position((2, H - 1));
    }
    // A new size: both buffers follow it and the frame is written whole.
    terminal.backend_mut().inner.resize(W + 4, H + 2);
    let mut wide = Buffer::empty(Rect::new(0, 0, W + 4, H + 2));
    wide.set_string(1, H + 1, "bottom of a taller screen", Style::default());
    super::draw(&mut terminal, None, |f, _| f.buffer_mut().merge(&wide)).unwrap();
    assert_eq!(visible(terminal.backend().inner.buffer()), visible(&wide));
}

#[test]
fn every_cell_written_is_guarded_and_an_unchanged_one_is_not_written_again() {
    let text = lines(30);
    let mut screen = Screen::new(TestBackend::new(W, H));
    // Cells set around ratatui's span filters: an escape, a C1 control, a newline and a wide symbol with an escape.
    let mut first = frame(&text, 0, "s");
    first[(3, 2)].set_symbol("\x1b");
    first[(4, 2)].set_symbol("\u{9b}");
    first[(5, 2)].set_symbol("\n");
    first[(0, 5)].set_symbol("好\x1b[2J");
    screen.present(first.clone(), None).unwrap();
    let row = |screen: &Screen<TestBackend>, y: u16| -> String {
        (0..W)
            .map(|x| screen.inner.buffer()[(x, y)].symbol().to_string())
            .collect()
    };
    assert!(row(&screen, 2).starts_with("lin␛\u{fffd}␊"), "{:?}", row(&screen, 2));
    assert!(!row(&screen, 5).contains('\x1b'), "{:?}", row(&screen, 5));
    for y in 0..H {
        assert!(
            !row(&screen, y).chars().any(|c| c.is_control()),
            "row {y}: {:?}",
            row(&screen, y)
        );
    }
    // The same frame again: nothing differs from what the terminal shows, so nothing is written.
    screen.next = first.clone();
    assert!(
        screen.changes(None, None, &mut vec![None; H as usize]).is_empty(),
        "guarded rows compare equal to what they were written as"
    );
    // The rest of the screen is the frame as drawn.
    let mut want = visible(&first);
    let shown = visible(screen.inner.buffer());
    for y in [2, 5] {
        want[y] = shown[y].clone();
    }
    assert_eq!(shown, want);
}

/// A frame as the transcript draws it: a status row, lines from `top` cut one column short of the width, a
/// scrollbar thumb in the last column (where `top` is), an input row. Rows in `skip` are left undrawn, and the input
/// row too when `keep_input`.
fn transcript_frame(buf: &mut Buffer, lines: &[String], top: usize, skip: std::ops::Range<u16>, keep_input: bool) {
    buf.set_string(0, 0, format!("status {top}"), Style::default().fg(Color::Yellow));
    for row in 1..H - 1 {
        if !skip.contains(&row)
            && let Some(line) = lines.get(top + usize::from(row) - 1)
        {
            buf.set_stringn(0, row, line, usize::from(W) - 1, Style::default().fg(Color::Cyan));
        }
        if usize::from(row) == 1 + top % usize::from(H - 2) {
            buf[(W - 1, row)].set_symbol("█");
        }
    }
    if !keep_input {
        buf.set_string(0, H - 1, "> ask tern", Style::default().fg(Color::Gray));
    }
}

/// Draws the transcript scrolled to each of `tops` in turn, each frame taking from the last one the transcript rows
/// (1..H-1) that show a line it showed, `by` rows further down, and the input row when `keep_input`; a clear comes
/// before the last frame; without `band`, only the input row is named (the screen finds the move itself). The screen
/// must end as each frame drawn whole. Returns how many frames took rows.
fn frames_taking_rows(tops: &[usize], keep_input: bool, band: bool) -> usize {
    use ratatui::Terminal;
    let text = lines(80);
    let area = Rect::new(0, 0, W, H);
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    let mut last: Option<usize> = None;
    let mut taken_frames = 0;
    for (n, &top) in tops.iter().enumerate() {
        if n + 1 == tops.len() {
            // The rows still come from the last frame, and everything is written again.
            terminal.clear().unwrap();
        }
        let kept = if keep_input { H - 1..H } else { 0..0 };
        let reuse = last.and_then(|last| {
            let by = top as i32 - last as i32;
            let rows = 1.max(1 - by)..(i32::from(H) - 1).min(i32::from(H) - 1 - by);
            match band && rows.start < rows.end {
                true => Some(super::Reuse {
                    frame: area,
                    rows: rows.start as u16..rows.end as u16,
                    by: by as i16,
                    cols: 0..W - 1,
                    kept: kept.clone(),
                }),
                false => (!kept.is_empty()).then(|| super::Reuse::kept(area, kept.clone())),
            }
        });
        let skip = reuse.as_ref().map_or(0..0, |r| r.rows.clone());
        super::draw(&mut terminal, reuse, |f, taken| {
            taken_frames += usize::from(taken);
            let skip = if taken { skip.clone() } else { 0..0 };
            transcript_frame(f.buffer_mut(), &text, top, skip, taken && keep_input);
        })
        .unwrap();
        let mut want = Buffer::empty(area);
        transcript_frame(&mut want, &text, top, 0..0, false);
        assert_eq!(
            visible(terminal.backend().inner.buffer()),
            visible(&want),
            "frame {n} (top {top})"
        );
        last = Some(top);
    }
    taken_frames
}

#[test]
fn rows_taken_from_the_last_frame_are_moved_and_the_screen_ends_as_each_frame() {
    let taken = frames_taking_rows(&[0, 1, 4, 4, 2, 30, 29, 29, 60, 61], false, true);
    // Not the first frame, nor the two jumps further than the view (30, 60).
    assert_eq!(taken, 7, "frames that took rows from the last one");
}

#[test]
fn rows_kept_where_they_were_are_not_drawn_and_the_screen_ends_as_each_frame() {
    let tops = [0, 1, 4, 4, 2, 30, 29, 29, 60, 61];
    // Every frame but the first keeps the input row, the jumps too.
    assert_eq!(frames_taking_rows(&tops, true, true), 9);
    assert_eq!(frames_taking_rows(&tops, true, false), 9, "the input row alone");
}

#[test]
fn kept_rows_the_terminal_would_move_are_not_taken() {
    let area = Rect::new(0, 0, W, H);
    let band = |kept: std::ops::Range<u16>| super::Reuse {
        frame: area,
        rows: 2..8,
        by: 3,
        cols: 0..W - 1,
        kept,
    };
    // The band's rows 2..8 show rows 5..11: the terminal moves rows 2..11.
    assert!(band(11..H).fits(area, area));
    assert!(band(0..2).fits(area, area));
    assert!(!band(10..12).fits(area, area), "a kept row the move reads from");
    assert!(!band(1..3).fits(area, area), "a kept row the move writes");
    assert!(!band(H - 1..H + 1).fits(area, area), "a kept row outside the frame");
    assert!(super::Reuse::kept(area, 0..H).fits(area, area));
    assert!(!super::Reuse::kept(area, 0..0).fits(area, area), "nothing to take");
}

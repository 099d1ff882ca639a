use std::sync::Arc;

use super::encode::{iterm2_inline, kitty_delete, kitty_place, kitty_transmit, sixel};
use super::{Graphics, Placement, Protocol, Setting, cell_pixels, detect};

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

#[test]
fn kitty_ghostty_iterm2_and_wezterm_are_recognised() {
    let auto = |vars: &[(&str, &str)]| detect(Setting::Auto, &env(vars));
    assert_eq!(auto(&[("TERM", "xterm-kitty")]), Some(Protocol::Kitty));
    assert_eq!(
        auto(&[("TERM", "xterm-256color"), ("KITTY_WINDOW_ID", "3")]),
        Some(Protocol::Kitty)
    );
    assert_eq!(auto(&[("TERM_PROGRAM", "ghostty")]), Some(Protocol::Kitty));
    assert_eq!(auto(&[("TERM_PROGRAM", "iTerm.app")]), Some(Protocol::Iterm2));
    assert_eq!(auto(&[("LC_TERMINAL", "iTerm2")]), Some(Protocol::Iterm2));
    assert_eq!(auto(&[("TERM_PROGRAM", "WezTerm")]), Some(Protocol::Iterm2));
}

#[test]
fn foot_konsole_windows_terminal_and_mlterm_draw_sixel() {
    let auto = |vars: &[(&str, &str)]| detect(Setting::Auto, &env(vars));
    assert_eq!(auto(&[("TERM", "foot")]), Some(Protocol::Sixel));
    assert_eq!(auto(&[("TERM", "foot-extra")]), Some(Protocol::Sixel));
    assert_eq!(auto(&[("TERM", "mlterm")]), Some(Protocol::Sixel));
    assert_eq!(
        auto(&[("TERM", "xterm-256color"), ("WT_SESSION", "a1b2")]),
        Some(Protocol::Sixel)
    );
    assert_eq!(
        auto(&[("TERM", "xterm-256color"), ("KONSOLE_VERSION", "240802")]),
        Some(Protocol::Sixel)
    );
    // konsole before 22.04 has no sixel; foot inside tmux passes none through.
    assert_eq!(auto(&[("TERM", "xterm-256color"), ("KONSOLE_VERSION", "211201")]), None);
    assert_eq!(auto(&[("TERM", "foot"), ("TMUX", "/tmp/tmux-1000/default,1,0")]), None);
}

#[test]
fn a_protocol_named_in_the_settings_is_used_whatever_the_environment_says() {
    for (name, protocol) in [
        ("kitty", Protocol::Kitty),
        ("iterm2", Protocol::Iterm2),
        ("sixel", Protocol::Sixel),
    ] {
        let setting = Setting::parse(name).unwrap();
        assert_eq!(setting, Setting::Only(protocol));
        let tmux = [("TERM", "tmux-256color"), ("TMUX", "/tmp/tmux-1000/default,1,0")];
        assert_eq!(detect(setting, &env(&tmux)), Some(protocol));
        assert_eq!(detect(setting, &env(&[])), Some(protocol));
    }
}

#[test]
fn no_graphics_inside_tmux_or_screen_when_off_or_when_unsure() {
    let kitty = [("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")];
    assert_eq!(detect(Setting::Off, &env(&kitty)), None);
    let mut in_tmux = kitty.to_vec();
    in_tmux.push(("TMUX", "/tmp/tmux-1000/default,1,0"));
    assert_eq!(detect(Setting::Auto, &env(&in_tmux)), None);
    let screen = [("TERM", "screen-256color"), ("TERM_PROGRAM", "iTerm.app")];
    assert_eq!(detect(Setting::Auto, &env(&screen)), None);
    assert_eq!(
        detect(
            Setting::Auto,
            &env(&[("TERM", "tmux-256color"), ("LC_TERMINAL", "iTerm2")])
        ),
        None
    );
    assert_eq!(detect(Setting::Auto, &env(&[("TERM", "xterm-256color")])), None);
    assert_eq!(
        detect(Setting::Auto, &env(&[("TERM", "xterm-kitty"), ("TMUX", "")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(Setting::parse("off"), Ok(Setting::Off));
    assert!(Setting::parse("ascii").unwrap_err().contains("ascii"));
}

#[test]
fn the_sequences_for_a_tiny_image_are_exact() {
    let png = b"PNG!";
    assert_eq!(
        kitty_transmit(7, png, 3, 2),
        "\x1b_Ga=T,f=100,i=7,c=3,r=2,C=1,q=2,m=0;UE5HIQ==\x1b\\"
    );
    assert_eq!(kitty_place(7, 3, 2), "\x1b_Ga=p,i=7,c=3,r=2,C=1,q=2\x1b\\");
    assert_eq!(kitty_delete(7), "\x1b_Ga=d,d=i,i=7,q=2\x1b\\");
    assert_eq!(
        iterm2_inline(png, 3, 2),
        "\x1b]1337;File=inline=1;size=4;width=3;height=2;preserveAspectRatio=1:UE5HIQ==\x07"
    );
}

#[test]
fn kitty_takes_the_payload_in_chunks_of_4096_bytes() {
    // 6000 bytes are 8000 of base64: one full chunk and one of 3904.
    let png = vec![0u8; 6000];
    let text = kitty_transmit(1, &png, 24, 8);
    let parts: Vec<&str> = text.split("\x1b\\").filter(|p| !p.is_empty()).collect();
    assert_eq!(parts.len(), 2);
    let (head, first) = parts[0].split_once(';').unwrap();
    assert_eq!(head, "\x1b_Ga=T,f=100,i=1,c=24,r=8,C=1,q=2,m=1");
    assert_eq!(first.len(), 4096);
    let (head, last) = parts[1].split_once(';').unwrap();
    assert_eq!(head, "\x1b_Gm=0");
    assert_eq!(last.len(), 8000 - 4096);
}

fn at(id: u32, y: u16) -> Placement {
    Placement {
        id,
        data: Arc::new(b"PNG!".to_vec()),
        x: 2,
        y,
        cols: 3,
        rows: 2,
    }
}

#[test]
fn kitty_sends_an_image_once_places_it_again_when_it_moves_and_writes_nothing_when_nothing_moved() {
    let mut graphics = Graphics::new(Protocol::Kitty, (10, 20));
    let mut out = Vec::new();
    graphics.show(&mut out, &[at(1, 5)]).unwrap();
    let first = String::from_utf8(std::mem::take(&mut out)).unwrap();
    assert_eq!(
        first,
        format!("\x1b7\x1b[6;3H{}\x1b8", kitty_transmit(1, b"PNG!", 3, 2))
    );
    for _ in 0..10 {
        assert_eq!(
            graphics.show(&mut out, &[at(1, 5)]).unwrap(),
            0,
            "a still frame redraws no image"
        );
    }
    assert!(out.is_empty());
    assert!(!graphics.repaint(&[at(1, 4)]), "kitty deletes, it needs no redraw");
    graphics.show(&mut out, &[at(1, 4)]).unwrap();
    let moved = String::from_utf8(std::mem::take(&mut out)).unwrap();
    assert_eq!(
        moved,
        format!("{}\x1b7\x1b[5;3H{}\x1b8", kitty_delete(1), kitty_place(1, 3, 2))
    );
    graphics.show(&mut out, &[]).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), kitty_delete(1), "out of view: deleted");
}

#[test]
fn iterm2_asks_for_a_whole_redraw_only_when_a_shown_picture_moved_or_left() {
    let mut graphics = Graphics::new(Protocol::Iterm2, (10, 20));
    let mut out = Vec::new();
    assert!(!graphics.repaint(&[at(1, 5)]));
    graphics.show(&mut out, &[at(1, 5)]).unwrap();
    assert!(!graphics.repaint(&[at(1, 5)]));
    assert!(graphics.repaint(&[at(1, 4)]));
    assert!(graphics.repaint(&[]));
    graphics.cleared();
    out.clear();
    assert!(!graphics.repaint(&[at(1, 4)]), "after a clear nothing is shown");
    graphics.show(&mut out, &[at(1, 4)]).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("\x1b7\x1b[5;3H{}\x1b8", iterm2_inline(b"PNG!", 3, 2))
    );
}

#[test]
fn a_thumbnail_takes_cells_for_its_pixels_within_24_by_8() {
    let graphics = Graphics::new(Protocol::Kitty, (10, 20));
    assert_eq!(graphics.max_pixels(), (240, 160));
    assert_eq!(graphics.cells(240, 120), (24, 6));
    assert_eq!(graphics.cells(80, 160), (8, 8));
    assert_eq!(graphics.cells(1, 1), (1, 1));
    assert_eq!(graphics.cells(10_000, 10_000), (24, 8));
    let small_cells = Graphics::new(Protocol::Sixel, (7, 15));
    assert_eq!(small_cells.max_pixels(), (168, 120));
    assert_eq!(small_cells.cells(168, 90), (24, 6));
}

#[test]
fn the_cell_size_comes_from_the_window_s_pixels_or_is_assumed_per_protocol() {
    assert_eq!(cell_pixels(Protocol::Sixel, (960, 800), (120, 40)), (8, 20));
    assert_eq!(cell_pixels(Protocol::Kitty, (1442, 700), (160, 35)), (9, 20));
    // The terminal left the pixels at 0 (many do), or said something absurd: the protocol's guess.
    assert_eq!(cell_pixels(Protocol::Sixel, (0, 0), (120, 40)), (8, 16));
    assert_eq!(cell_pixels(Protocol::Kitty, (0, 0), (120, 40)), (10, 20));
    assert_eq!(cell_pixels(Protocol::Iterm2, (120, 40), (120, 40)), (10, 20));
    assert_eq!(cell_pixels(Protocol::Sixel, (500, 500), (0, 0)), (8, 16));
}

#[test]
fn sixel_is_drawn_at_the_cursor_and_like_iterm2_taken_away_by_a_redraw() {
    let body = b"\"1;1;2;1#0;2;100;0;0#0NN";
    let mut graphics = Graphics::new(Protocol::Sixel, (8, 16));
    let mut out = Vec::new();
    let mut pic = at(1, 5);
    pic.data = Arc::new(body.to_vec());
    graphics.show(&mut out, std::slice::from_ref(&pic)).unwrap();
    assert_eq!(
        String::from_utf8(std::mem::take(&mut out)).unwrap(),
        "\x1b7\x1b[6;3H\x1bP0;1;0q\"1;1;2;1#0;2;100;0;0#0NN\x1b\\\x1b8"
    );
    assert_eq!(graphics.show(&mut out, std::slice::from_ref(&pic)).unwrap(), 0);
    assert!(graphics.repaint(&[]), "its pixels are cells: a redraw takes them away");
}

#[test]
fn a_sixel_body_that_is_not_printable_ascii_draws_nothing() {
    assert_eq!(sixel(b"#0!4~"), "\x1bP0;1;0q#0!4~\x1b\\");
    for bad in [
        &b"#0~\x1b\\\x1b]52;c;aGk=\x07"[..],
        b"#0~\x07",
        b"#0 ~",
        b"#0\xc3\xa9",
        b"#0~\n",
        b"",
    ] {
        assert_eq!(sixel(bad), "", "{bad:?}");
    }
}

#[test]
fn leaving_kitty_frees_every_image_sent_and_nothing_for_the_others() {
    let mut graphics = Graphics::new(Protocol::Kitty, (10, 20));
    let mut out = Vec::new();
    graphics.show(&mut out, &[at(2, 5), at(1, 12)]).unwrap();
    out.clear();
    graphics.release(&mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "\x1b_Ga=d,d=I,i=1,q=2\x1b\\\x1b_Ga=d,d=I,i=2,q=2\x1b\\"
    );
    for protocol in [Protocol::Iterm2, Protocol::Sixel] {
        let mut graphics = Graphics::new(protocol, (10, 20));
        let mut out = Vec::new();
        graphics.show(&mut out, &[at(1, 5)]).unwrap();
        out.clear();
        graphics.release(&mut out).unwrap();
        assert!(out.is_empty());
    }
}

#[test]
fn after_a_clear_kitty_deletes_what_it_may_still_show_and_places_it_again() {
    let mut graphics = Graphics::new(Protocol::Kitty, (10, 20));
    let mut out = Vec::new();
    graphics.show(&mut out, &[at(1, 5)]).unwrap();
    graphics.cleared();
    out.clear();
    graphics.show(&mut out, &[at(1, 5)]).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{}\x1b7\x1b[6;3H{}\x1b8", kitty_delete(1), kitty_place(1, 3, 2))
    );
}

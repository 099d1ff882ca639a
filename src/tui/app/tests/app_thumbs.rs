//! Thumbnails in the transcript: asked of the host for the images a message names, rows reserved under the message,
//! placed only while whole on screen and nothing is over the transcript, and not drawn again while nothing moves.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::graphics::Protocol;
use crate::screen::Screen;
use crate::view::help::HelpLayer;

const W: u16 = 60;
const H: u16 = 20;

/// The harness with pictures on (kitty), `shot.png` in its workspace, and the loop's wake-up channel.
fn with_pictures() -> (Harness, mpsc::UnboundedReceiver<()>) {
    let mut h = harness();
    std::fs::write(h._dir.path().join("shot.png"), b"any").unwrap();
    let (wake, woken) = mpsc::unbounded_channel();
    h.app.pictures = Some(thumbs::Pictures::new(Protocol::Kitty, (10, 20), wake));
    (h, woken)
}

fn draw(h: &mut Harness, terminal: &mut Terminal<Screen<TestBackend>>) -> Vec<u8> {
    h.app.draw(terminal).unwrap();
    let mut out = Vec::new();
    let placements = h.app.placements().to_vec();
    h.app
        .pictures
        .as_mut()
        .unwrap()
        .graphics
        .show(&mut out, &placements)
        .unwrap();
    out
}

#[tokio::test]
async fn a_message_naming_an_image_shows_its_thumbnail_over_reserved_rows_until_it_scrolls_away() {
    let (mut h, mut woken) = with_pictures();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "what is wrong here @shot.png and @../outside.png".into(),
    });
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    // The first frame asks for the thumbnails, which a blocking thread makes: they may be in that frame already or
    // come for the next one, and the picture is sent once either way.
    let mut first = draw(&mut h, &mut terminal);
    woken.recv().await.unwrap();
    woken.recv().await.unwrap();
    first.extend(draw(&mut h, &mut terminal));
    let first = String::from_utf8(first).unwrap();
    let placements = h.app.placements().to_vec();
    assert_eq!(
        placements.len(),
        1,
        "only the image the read policy lets the user attach"
    );
    let at = &placements[0];
    assert_eq!((at.x, at.cols, at.rows), (2, 24, 6));
    assert!(
        first.starts_with(&format!("\x1b7\x1b[{};3H\x1b_Ga=T,f=100,i=1,", at.y + 1)),
        "{first:?}"
    );
    let screen = format!("{}", terminal.backend().inner());
    let rows: Vec<&str> = screen.lines().collect();
    assert!(rows[usize::from(at.y) - 1].contains("what is wrong here"), "{screen}");
    for row in &rows[usize::from(at.y)..usize::from(at.y + at.rows)] {
        assert!(
            row.trim_matches(['"', ' ', '│', '█', '▐', '║']).is_empty(),
            "a reserved row shows nothing: {row:?}"
        );
    }

    for _ in 0..5 {
        assert!(
            draw(&mut h, &mut terminal).is_empty(),
            "a still frame writes no picture"
        );
    }

    h.app.layers.push(Box::new(HelpLayer::new(
        Keymap::default().describe_all(),
        slash_commands(),
    )));
    let covered = String::from_utf8(draw(&mut h, &mut terminal)).unwrap();
    assert_eq!(
        covered,
        crate::graphics::encode::kitty_delete(1),
        "a layer over the transcript takes it away"
    );
    h.app.layers.clear();
    let back = String::from_utf8(draw(&mut h, &mut terminal)).unwrap();
    assert!(back.contains("a=p,i=1,"), "placed again, not sent again: {back:?}");

    for i in 0..30 {
        h.event(Event::TurnStarted {
            turn: i + 2,
            text: format!("next message {i}"),
        });
    }
    let scrolled = String::from_utf8(draw(&mut h, &mut terminal)).unwrap();
    assert!(h.app.placements().is_empty());
    assert_eq!(
        scrolled,
        crate::graphics::encode::kitty_delete(1),
        "scrolled out of view: deleted"
    );
}

#[test]
fn without_a_graphics_protocol_nothing_is_asked_and_no_row_is_reserved() {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "look @shot.png".into(),
    });
    let before = h.screen(W, H);
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    h.app.draw(&mut terminal).unwrap();
    assert!(h.app.placements().is_empty());
    assert_eq!(h.screen(W, H), before);
}

#[test]
fn each_image_is_asked_for_once_per_transcript_and_again_when_a_session_is_shown_anew() {
    let mut h = harness();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "@a.png and @\"my shot.png\" and @a.png, not me@x.png".into(),
    });
    assert_eq!(h.app.state.thumbnails_to_ask(), ["a.png", "my shot.png"]);
    h.event(Event::TurnStarted {
        turn: 2,
        text: "again @a.png and @b.gif".into(),
    });
    assert_eq!(h.app.state.thumbnails_to_ask(), ["b.gif"]);
    assert!(h.app.state.thumbnails_to_ask().is_empty());
    // A resumed or reloaded session is shown in a new state: its messages' images are asked for again.
    h.app.state = crate::state::AppState::new();
    h.event(Event::TurnStarted {
        turn: 1,
        text: "@a.png".into(),
    });
    assert_eq!(h.app.state.thumbnails_to_ask(), ["a.png"]);
}

#[tokio::test]
async fn in_sixel_a_thumbnail_is_drawn_as_sixel_and_asked_for_again_when_the_cells_change_size() {
    let mut h = harness();
    std::fs::write(h._dir.path().join("shot.png"), b"any").unwrap();
    let (wake, mut woken) = mpsc::unbounded_channel();
    h.app.pictures = Some(thumbs::Pictures::new(Protocol::Sixel, (8, 16), wake));
    h.event(Event::TurnStarted {
        turn: 1,
        text: "look @shot.png".into(),
    });
    let mut terminal = Terminal::new(Screen::new(TestBackend::new(W, H))).unwrap();
    let mut out = draw(&mut h, &mut terminal);
    woken.recv().await.unwrap();
    out.extend(draw(&mut h, &mut terminal));
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("\x1bP0;1;0q\"1;1;240;120#"), "{out:?}");
    // The host's 240×120 pixels in 8×16 cells.
    let at = h.app.placements()[0].clone();
    assert_eq!((at.cols, at.rows), (24, 8));

    h.app.cells_resized((8, 16));
    assert!(
        draw(&mut h, &mut terminal).is_empty(),
        "the same cells: nothing asked or drawn again"
    );

    // A larger font: the thumbnail is asked for again and takes the cells its pixels fill now.
    h.app.cells_resized((12, 24));
    assert!(
        h.app.state.thumbnails.get("shot.png").is_none(),
        "the old size is forgotten"
    );
    let mut again = draw(&mut h, &mut terminal);
    woken.recv().await.unwrap();
    again.extend(draw(&mut h, &mut terminal));
    let again = String::from_utf8(again).unwrap();
    assert!(again.contains("\x1bP0;1;0q"), "{again:?}");
    let at = &h.app.placements()[0];
    assert_eq!((at.cols, at.rows), (20, 5));
}

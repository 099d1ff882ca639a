//! `[tui]`: settings of the full-screen frontend only.
//!
//! ```toml
//! [tui]
//! mouse = false   # no mouse capture: the terminal selects text (F2 toggles it while tern runs)
//! notify = "auto" # how tern tells you it needs you: auto, osc9, osc777, bell or off
//! notify_after = 10 # seconds: a turn this long is told when it ends
//! images = "auto" # thumbnails of attached images where the terminal has graphics (kitty, iTerm2, sixel): auto, off,
//!                 # or the protocol to use whatever the terminal seems to be: kitty, iterm2, sixel
//! ```

use serde::Deserialize;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFile {
    /// Capture the mouse (the wheel scrolls the transcript); off, the terminal's own selection works. Default on.
    pub mouse: Option<bool>,
    /// How to tell the user that an approval or a question waits, or a long turn ended, while they are away:
    /// `auto` (from the terminal), `osc9`, `osc777`, `bell` or `off`.
    pub notify: Option<String>,
    /// Seconds a turn runs before its end is told (and before a terminal that never reports focus counts as
    /// unattended). Default 10.
    pub notify_after: Option<u64>,
    /// Thumbnails of attached images in the transcript: `auto` (where the terminal has a graphics protocol) or `off`.
    pub images: Option<String>,
}

impl TuiFile {
    /// Layers `other` over `self`.
    pub fn merge(&mut self, other: TuiFile) {
        if other.mouse.is_some() {
            self.mouse = other.mouse;
        }
        if other.notify.is_some() {
            self.notify = other.notify;
        }
        if other.notify_after.is_some() {
            self.notify_after = other.notify_after;
        }
        if other.images.is_some() {
            self.images = other.images;
        }
    }

    /// Whether thumbnails are drawn; a value tern does not know is `auto`, with a warning.
    pub fn images(&self) -> (crate::tui::graphics::Setting, Option<String>) {
        match self.images.as_deref().map(crate::tui::graphics::Setting::parse) {
            None => (crate::tui::graphics::Setting::Auto, None),
            Some(Ok(setting)) => (setting, None),
            Some(Err(e)) => (crate::tui::graphics::Setting::Auto, Some(format!("[tui] {e}"))),
        }
    }

    /// The notification settings; a style tern does not know is the automatic one, with a warning.
    pub fn notify(&self) -> (crate::tui::notify::Settings, Option<String>) {
        let defaults = crate::tui::notify::Settings::default();
        let (style, warning) = match self.notify.as_deref().map(crate::tui::notify::Style::parse) {
            None => (None, None),
            Some(Ok(style)) => (style, None),
            Some(Err(e)) => (None, Some(format!("[tui] {e}"))),
        };
        let after = self.notify_after.map_or(defaults.after, std::time::Duration::from_secs);
        (crate::tui::notify::Settings { style, after }, warning)
    }

    /// Whether mouse capture starts on.
    pub fn mouse(&self) -> bool {
        self.mouse.unwrap_or(true)
    }
}

/// The `[tui]` settings for `workspace`, from the same files as everything else (a file that cannot be read gives the
/// defaults: the agent's start-up has already reported it).
pub fn load(workspace: &std::path::Path) -> TuiFile {
    super::load_layers(workspace, super::ConfigFile::default())
        .map(|layers| layers.file.tui)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::ConfigFile;
    use std::path::Path;

    #[test]
    fn mouse_is_on_unless_a_layer_turns_it_off() {
        let parse = |text: &str| ConfigFile::parse(text, Path::new("config.toml")).unwrap();
        assert!(parse("").tui.mouse());
        let off = parse("[tui]\nmouse = false\n");
        assert!(!off.tui.mouse());
        assert!(!parse("").merge(off.clone()).tui.mouse(), "a later layer wins");
        assert!(off.clone().merge(parse("[tui]\nmouse = true\n")).tui.mouse());
        assert!(
            off.clone().merge(parse("")).tui.mouse.is_some(),
            "an unset layer keeps it"
        );
        let err = ConfigFile::parse("[tui]\nmose = false\n", Path::new("config.toml")).unwrap_err();
        assert!(err.to_string().contains("mose"), "{err}");
    }

    #[test]
    fn notify_is_automatic_after_ten_seconds_unless_set() {
        use crate::tui::notify::Style;
        use std::time::Duration;
        let parse = |text: &str| ConfigFile::parse(text, Path::new("config.toml")).unwrap();
        let (settings, warning) = parse("").tui.notify();
        assert_eq!(
            (settings.style, settings.after, warning),
            (None, Duration::from_secs(10), None)
        );
        let set = parse("[tui]\nnotify = \"osc777\"\nnotify_after = 0\n");
        let (settings, _) = parse("").merge(set).tui.notify();
        assert_eq!((settings.style, settings.after), (Some(Style::Osc777), Duration::ZERO));
        let (settings, warning) = parse("[tui]\nnotify = \"loud\"\n").tui.notify();
        assert_eq!(settings.style, None);
        assert!(warning.unwrap().contains("loud"));
    }

    #[test]
    fn images_are_automatic_unless_turned_off_or_given_a_protocol() {
        use crate::tui::graphics::Setting;
        let parse = |text: &str| ConfigFile::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(parse("").tui.images(), (Setting::Auto, None));
        let off = parse("[tui]\nimages = \"off\"\n");
        assert_eq!(parse("").merge(off).tui.images(), (Setting::Off, None));
        let sixel = parse("[tui]\nimages = \"sixel\"\n").tui.images();
        assert_eq!(sixel, (Setting::Only(crate::tui::graphics::Protocol::Sixel), None));
        let (setting, warning) = parse("[tui]\nimages = \"ascii\"\n").tui.images();
        assert_eq!(setting, Setting::Auto);
        assert!(warning.unwrap().contains("ascii"));
    }
}

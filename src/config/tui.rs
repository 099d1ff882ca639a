//! `[tui]`: settings of the full-screen frontend only.
//!
//! ```toml
//! [tui]
//! mouse = false   # no mouse capture: the terminal selects text (F2 toggles it while tern runs)
//! ```

use serde::Deserialize;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFile {
    /// Capture the mouse (the wheel scrolls the transcript); off, the terminal's own selection works. Default on.
    pub mouse: Option<bool>,
}

impl TuiFile {
    /// Layers `other` over `self`.
    pub fn merge(&mut self, other: TuiFile) {
        if other.mouse.is_some() {
            self.mouse = other.mouse;
        }
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
}

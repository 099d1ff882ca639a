//! The images a user's message attaches (`@shot.png`): read through the session's path policy as `read_file` reads
//! one (or, for an image pasted from the clipboard, from tern's own pasted-images directory), and refused, before
//! anything is sent, to a model the catalog does not say accepts images.

use std::sync::Arc;

use super::Session;
use tern_protocol::Image;
use tern_provider::models::Catalog;

impl Session {
    /// Uses `catalog` to tell which models accept images (without one, none is sent any).
    pub(crate) fn with_catalog(mut self, catalog: Option<Arc<Catalog>>) -> Self {
        self.catalog = catalog;
        self
    }

    /// The images `text` attaches, with a chip each for the user (`[image shot.png 1280×720 84 KB]`); the error says why none can be sent.
    pub(super) async fn attached_images(&self, text: &str) -> Result<Vec<(String, Image)>, String> {
        // A mention of no file at all is only text (`the retina file will be @icon@2x.png`), as Claude Code leaves it;
        // one tern cannot read (outside the workspace, a secret, not an image) is refused with the reason below.
        let paths: Vec<&str> = image_mentions(text)
            .into_iter()
            .filter(|path| match self.policy.resolve_read(path) {
                Ok(resolved) => resolved.exists(),
                Err(_) => true,
            } || tern_fs::places::pasted_image(path).is_some())
            .collect();
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let model = self
            .turn_model
            .clone()
            .or_else(|| self.shared.model())
            .unwrap_or_else(|| self.provider.model().to_string());
        match self.catalog.as_ref().and_then(|c| c.accepts_images(&model)) {
            Some(true) => {}
            Some(false) => return Err(format!("{model} does not accept images; the message was not sent")),
            None => {
                return Err(format!(
                    "the model catalog does not say whether {model} accepts images, so the message was not sent; \
                     if it does, declare it in config.toml:\n  [models.\"{model}\"]\n  images = true"
                ));
            }
        }
        let mut images = Vec::new();
        for path in paths {
            let attached = match tern_fs::places::pasted_image(path) {
                Some(file) => tern_tools::fs::read_pasted_image(&file).await,
                None => tern_tools::fs::read_image(Arc::clone(&self.policy), path).await,
            }
            .map_err(|e| format!("could not attach {path}: {e}"))?;
            images.push((attached.chip, attached.image));
        }
        Ok(images)
    }
}

/// The images `text` names (`@shot.png`, `@"my shot.png"`), each once.
pub(crate) fn image_mentions(text: &str) -> Vec<&str> {
    Image::mentions(text)
}

#[cfg(test)]
mod tests {
    use super::image_mentions;

    #[test]
    fn image_mentions_are_at_words_with_an_image_extension() {
        assert_eq!(
            image_mentions("@shot.png what is @a/b.JPEG vs @src/lib.rs and me@x.png @shot.png"),
            vec!["shot.png", "a/b.JPEG"]
        );
        assert_eq!(
            image_mentions(
                "see @\"Screen Shot 1.png\", @\"unclosed.png and x@\"in.png\" @\"a.rs\" @\"Screen Shot 1.png\""
            ),
            vec!["Screen Shot 1.png"]
        );
        assert_eq!(
            image_mentions("@\"x.png\"@y.png"),
            vec!["x.png"],
            "a mention ends its word"
        );
    }
}

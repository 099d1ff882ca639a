//! An image the user attaches to a message (`@shot.png`): read as `read_file` reads one (the same path policy, the
//! same secret check, the same size cap and encoding), so the user's road and the model's are one.

use std::sync::Arc;

use base64::Engine as _;
use tokio_util::sync::CancellationToken;

use super::read::Request;
use super::sniff::ImageKind;
use super::{human_size, run_blocking};
use crate::PathPolicy;
use crate::file_state::FileTracker;
use tern_protocol::Image;

/// One attached image: its chip for the user (`[image shot.png 1280×720 84 KB]`) and the image itself.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachedImage {
    pub chip: String,
    pub image: Image,
}

/// The most bytes an attached image may have: Anthropic's limit for one image, under OpenAI's.
const MAX_BYTES: usize = 5 * 1024 * 1024;
/// The longest side an attached image may have in pixels (Anthropic refuses larger ones). tern does not scale images
/// down: a larger one is refused with the limit, for the user to make a smaller copy.
const MAX_SIDE: u32 = 8000;

/// Why `data` is too large to attach, if it is.
fn too_large(display: &str, data: &[u8]) -> Option<String> {
    let smaller = "make a smaller copy (for example with ImageMagick's `convert -resize`) and attach that";
    if data.len() > MAX_BYTES {
        return Some(format!(
            "'{display}' is {}; images over {} are not sent to the model: {smaller}",
            human_size(data.len() as u64),
            human_size(MAX_BYTES as u64)
        ));
    }
    let (w, h) = ImageKind::detect(data).and_then(|kind| kind.dimensions(data))?;
    (w.max(h) > MAX_SIDE).then(|| {
        format!(
            "'{display}' is {w}×{h} pixels; images over {MAX_SIDE} pixels a side are not sent to the model: {smaller}"
        )
    })
}

/// `[image shot.png 1280×720 84 KB]`, or without the size in pixels when the header does not tell it.
fn chip(display: &str, data: &[u8]) -> String {
    let pixels = ImageKind::detect(data)
        .and_then(|kind| kind.dimensions(data))
        .map(|(w, h)| format!(" {w}×{h}"))
        .unwrap_or_default();
    format!("[image {display}{pixels} {}]", human_size(data.len() as u64))
}

/// Reads the image at `path` through `policy`. The error is a sentence for the user.
pub async fn read_image(policy: Arc<PathPolicy>, path: &str) -> Result<AttachedImage, String> {
    let resolved = policy.resolve_read(path).map_err(|e| e.to_string())?;
    let request = Request {
        display: policy.display(&resolved),
        resolved,
        offset: 1,
        limit: 1,
        policy,
        // A fresh tracker: an attachment is never answered with "unchanged since the last read".
        files: Arc::new(FileTracker::default()),
        cancel: CancellationToken::new(),
    };
    let display = request.display.clone();
    let mut output = run_blocking(move || request.run()).await.map_err(|e| e.to_string())?;
    match output.images.pop() {
        Some(image) => {
            let data = base64::engine::general_purpose::STANDARD
                .decode(&image.data_base64)
                .unwrap_or_default();
            if let Some(reason) = too_large(&display, &data) {
                return Err(reason);
            }
            Ok(AttachedImage {
                chip: chip(&display, &data),
                image,
            })
        }
        None => Err(format!("'{display}' is not a PNG, JPEG, GIF or WebP image")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::read_image;
    use crate::fs::sniff::tests::png_header;
    use crate::fs::testing::workspace;

    #[tokio::test]
    async fn an_image_is_read_with_its_chip() {
        let ws = workspace();
        ws.write("shots/a.png", png_header(1280, 720));
        let attached = read_image(Arc::clone(&ws.ctx.policy), "shots/a.png").await.unwrap();
        assert!(
            attached.chip.starts_with("[image shots/a.png 1280×720 "),
            "{}",
            attached.chip
        );
        assert_eq!(attached.image.media_type, "image/png");
    }

    #[tokio::test]
    async fn too_large_outside_or_not_an_image_is_refused_with_why() {
        let ws = workspace();
        ws.write("wide.png", png_header(9000, 100));
        let err = read_image(Arc::clone(&ws.ctx.policy), "wide.png").await.unwrap_err();
        assert!(err.contains("9000×100 pixels; images over 8000 pixels a side"), "{err}");
        let mut big = png_header(100, 100);
        big.resize(6 * 1024 * 1024, 0);
        ws.write("big.png", big);
        let err = read_image(Arc::clone(&ws.ctx.policy), "big.png").await.unwrap_err();
        assert!(err.contains("images over 5.0 MB are not sent"), "{err}");
        std::fs::write(ws.outside("out.png"), png_header(10, 10)).unwrap();
        assert!(read_image(Arc::clone(&ws.ctx.policy), "../out.png").await.is_err());
        ws.write("text.png", "hello\n");
        let err = read_image(Arc::clone(&ws.ctx.policy), "text.png").await.unwrap_err();
        assert!(err.contains("is not a PNG, JPEG, GIF or WebP image"), "{err}");
    }
}

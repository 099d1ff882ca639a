//! An image the user attaches to a message (`@shot.png`): read as `read_file` reads one (the same path policy, the
//! same secret check, the same size cap, the same check by decoding and scaling down to what the models accept), so
//! the user's road and the model's are one.

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use tokio_util::sync::CancellationToken;

use super::read::Request;
use super::sniff::ImageKind;
use super::{human_size, run_blocking};
use crate::file_state::FileTracker;
use crate::{PathPolicy, ToolError};
use tern_protocol::Image;

/// One attached image: its chip for the user (`[image shot.png 1280×720 84 KB]`) and the image itself.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachedImage {
    pub chip: String,
    pub image: Image,
}

/// `[image shot.png 1280×720 84 KB]`, or `[image shot.png 1568×882 from 4000×2250 312 KB]` for one `read_file`'s
/// reader scaled down (its summary says from what).
fn chip(display: &str, summary: &str, data: &[u8]) -> String {
    let pixels = ImageKind::detect(data)
        .and_then(|kind| kind.dimensions(data))
        .map(|(w, h)| format!(" {w}×{h}"))
        .unwrap_or_default();
    let from = summary
        .split_once("scaled down from ")
        .and_then(|(_, rest)| rest.split([',', ')']).next())
        .map(|original| format!(" from {original}"))
        .unwrap_or_default();
    format!("[image {display}{pixels}{from} {}]", human_size(data.len() as u64))
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
            Ok(AttachedImage {
                chip: chip(&display, &output.text, &data),
                image,
            })
        }
        None => Err(format!("'{display}' is not a PNG, JPEG, GIF or WebP image")),
    }
}

/// The most bytes of a pasted image read (as many as tern takes from the clipboard program).
const MAX_PASTED_BYTES: u64 = 20 * 1024 * 1024;

/// Reads an image the user pasted from the clipboard, kept by tern in `pasted` (its own private directory, outside
/// the workspace and hidden from commands, so not through the session's read policy), checked and fitted as any.
pub async fn read_pasted_image(pasted: &Path) -> Result<AttachedImage, String> {
    let display = pasted
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = pasted.to_path_buf();
    let name = display.clone();
    let fitted = run_blocking(move || {
        let mut data = Vec::new();
        tern_fs::open(&path)
            .and_then(|file| file.take(MAX_PASTED_BYTES + 1).read_to_end(&mut data))
            .map_err(|e| ToolError::Failed(format!("'{name}' could not be read: {e}")))?;
        if data.len() as u64 > MAX_PASTED_BYTES {
            return Err(ToolError::Failed(format!(
                "'{name}' is over {}",
                human_size(MAX_PASTED_BYTES)
            )));
        }
        tern_image::fit(&data)
            .map_err(|reason| ToolError::Failed(format!("'{name}' is not sent to the model: {reason}.")))
    })
    .await
    .map_err(|e| e.to_string())?;
    let summary = fitted.pixels();
    Ok(AttachedImage {
        chip: chip(&display, &summary, &fitted.data),
        image: Image {
            media_type: fitted.media_type.to_string(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(&fitted.data),
        },
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{read_image, read_pasted_image};
    use crate::fs::testing::workspace;
    use tern_testkit::{encoded_image, image_size};

    #[tokio::test]
    async fn an_image_is_read_with_its_chip() {
        let ws = workspace();
        let png = encoded_image(1280, 720, "png");
        ws.write("shots/a.png", &png);
        let attached = read_image(Arc::clone(&ws.ctx.policy), "shots/a.png").await.unwrap();
        assert!(
            attached.chip.starts_with("[image shots/a.png 1280×720 "),
            "{}",
            attached.chip
        );
        assert_eq!(attached.image.media_type, "image/png");
    }

    #[tokio::test]
    async fn a_large_image_is_scaled_down_and_its_chip_says_from_what() {
        let ws = workspace();
        ws.write("wide.jpg", encoded_image(9000, 900, "jpeg"));
        let attached = read_image(Arc::clone(&ws.ctx.policy), "wide.jpg").await.unwrap();
        assert!(
            attached.chip.starts_with("[image wide.jpg 1568×157 from 9000×900 "),
            "{}",
            attached.chip
        );
        let data =
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &attached.image.data_base64).unwrap();
        assert_eq!(image_size(&data), Some((1568, 157)));
    }

    #[tokio::test]
    async fn broken_outside_or_not_an_image_is_refused_with_why() {
        let ws = workspace();
        let mut png = encoded_image(100, 100, "png");
        png.truncate(png.len() / 2);
        ws.write("broken.png", png);
        let err = read_image(Arc::clone(&ws.ctx.policy), "broken.png").await.unwrap_err();
        assert!(
            err.contains("'broken.png' is not sent to the model: it cannot be read as a PNG image"),
            "{err}"
        );
        std::fs::write(ws.outside("out.png"), encoded_image(10, 10, "png")).unwrap();
        assert!(read_image(Arc::clone(&ws.ctx.policy), "../out.png").await.is_err());
        ws.write("text.png", "hello\n");
        let err = read_image(Arc::clone(&ws.ctx.policy), "text.png").await.unwrap_err();
        assert!(err.contains("is not a PNG, JPEG, GIF or WebP image"), "{err}");
    }

    #[tokio::test]
    async fn a_pasted_image_is_read_from_tern_s_own_file_and_fitted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clip-1.png");
        std::fs::write(&file, encoded_image(2000, 1000, "png")).unwrap();
        let attached = read_pasted_image(&file).await.unwrap();
        assert!(
            attached.chip.starts_with("[image clip-1.png 1568×784 from 2000×1000 "),
            "{}",
            attached.chip
        );
        std::fs::write(&file, "not an image").unwrap();
        let err = read_pasted_image(&file).await.unwrap_err();
        assert!(err.contains("'clip-1.png' is not sent to the model"), "{err}");
    }
}

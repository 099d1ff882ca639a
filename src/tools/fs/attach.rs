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
            Ok(AttachedImage {
                chip: chip(&display, &data),
                image,
            })
        }
        None => Err(format!("'{display}' is not a PNG, JPEG, GIF or WebP image")),
    }
}

//! Images for the model: a PNG, JPEG, GIF or WebP file is checked by decoding it, within bounds read from its header
//! before any pixel is decoded, and one too large for the providers is downscaled and re-encoded (PNG or JPEG); a
//! thumbnail for the terminal is encoded as PNG or sixel.
//!
//! One place for the user's attachments and `read_file`'s images alike. The file may be hostile (the model chose it,
//! or a cloned repository holds it): its header's dimensions are checked against a pixel budget first, and the decoder
//! is given an allocation limit, so a small file claiming a huge canvas costs nothing. This crate does no I/O.

mod fit;
mod sixel;
mod thumbnail;

pub use fit::{Fitted, fit};
pub use sixel::sixel;
pub use thumbnail::{Format, Thumbnail, thumbnail};

/// What every wire format tern speaks accepts, so one image suits any model it is sent to.
///
/// Anthropic refuses an image over 8000 pixels a side or over 5 MB of base64, and recommends a long edge of at most
/// 1568 pixels (it scales larger ones down itself, at the sender's cost in time). OpenAI (chat and Responses) fits a
/// high-detail image into 2048×2048 and then its short side into 768, and takes up to 20 MB; an image within 1568 is
/// within both.
pub const MAX_SIDE: u32 = 1568;
/// The most bytes of an encoded image: Anthropic's 5 MB holds for the base64 text, three quarters of that in bytes.
pub const MAX_BYTES: usize = 5 * 1024 * 1024 / 4 * 3;
/// The largest canvas tern decodes (to scale it down): 40 megapixels, 160 MB of RGBA, beyond any screen shot.
pub const MAX_DECODE_PIXELS: u64 = 40_000_000;
/// The longest side tern decodes.
pub const MAX_DECODE_SIDE: u32 = 16_384;

#[cfg(test)]
mod tests;

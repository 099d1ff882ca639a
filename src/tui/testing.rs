//! A session host for the UI's own tests: the read policy and session logs are the real ones (from the crates the
//! root host uses), nothing starts another session, and trusting a project is recorded for the test to see.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tern_protocol::SessionSummary;

use crate::host::{Connection, Host, PictureFormat, Session, Thumbnail, Transcript, TrustOffer};

/// The prices a session host gives the UI: the model catalog's own.
pub(crate) fn prices() -> std::sync::Arc<dyn tern_protocol::Prices> {
    std::sync::Arc::new(tern_provider::models::Catalog::builtin().clone())
}

pub(crate) struct TestHost {
    workspace: PathBuf,
    /// The offers the user trusted.
    pub(crate) trusted: Mutex<Vec<TrustOffer>>,
    /// `trust` fails with this.
    pub(crate) trust_error: Option<String>,
}

impl TestHost {
    pub(crate) fn new(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            trusted: Mutex::new(Vec::new()),
            trust_error: None,
        }
    }
}

impl Host for TestHost {
    fn switches(&self) -> bool {
        false
    }

    fn resume(&self, _path: &Path) -> Result<(Connection, Session), String> {
        Err("this session cannot switch to another".into())
    }

    fn fork(&self, _path: &Path) -> Result<PathBuf, String> {
        Err("this session cannot switch to another".into())
    }

    fn sessions(&self) -> Vec<SessionSummary> {
        Vec::new()
    }

    fn session_details(&self, path: &Path) -> tern_protocol::SessionDetails {
        tern_session::list::details(path).unwrap_or_default()
    }

    fn transcript(&self, path: &Path) -> Result<Transcript, String> {
        let loaded = tern_session::log::load(path).map_err(|e| e.to_string())?;
        Ok((loaded.messages, loaded.events))
    }

    fn trust(&self, offer: &TrustOffer) -> Result<(), String> {
        if let Some(e) = &self.trust_error {
            return Err(e.clone());
        }
        self.trusted.lock().unwrap().push(offer.clone());
        Ok(())
    }

    fn trust_offer(&self) -> Option<TrustOffer> {
        None
    }

    fn attachable(&self, path: &str) -> Result<PathBuf, String> {
        tern_tools::PathPolicy::new(&self.workspace)
            .map_err(|e| e.to_string())?
            .attachable(path)
    }

    /// A fixed picture of 240×120 pixels for any file the read policy lets the user attach (the UI never looks
    /// into the PNG; the root host's own tests check the real decoding).
    fn thumbnail(&self, path: &str, _max: (u32, u32), format: PictureFormat) -> Result<Thumbnail, String> {
        self.attachable(path)?;
        let data = match format {
            PictureFormat::Png => b"PNG!".to_vec(),
            PictureFormat::Sixel => b"\"1;1;240;120#0;2;100;0;0#0!240~".to_vec(),
        };
        Ok(Thumbnail {
            data,
            width: 240,
            height: 120,
        })
    }

    fn export(&self, log: &Path, typed: &str) -> Result<PathBuf, String> {
        let meta = tern_session::log::read_meta(log).map_err(|e| e.to_string())?;
        let path = tern_session::export::destination(&self.workspace, &meta.id, typed);
        tern_session::export::save(log, &path, None)?;
        Ok(path)
    }
}

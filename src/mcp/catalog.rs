//! What a server offers, as last listed: its tools, resources, resource templates and prompts.

use std::collections::HashSet;

use rmcp::model::{Prompt, Resource, ResourceTemplate};

/// What a server offers, as last listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    pub tools: Vec<rmcp::model::Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
    /// Tools the server says can only run as tasks (`execution.taskSupport: "required"`), which tern does not offer.
    pub task_only: HashSet<String>,
}

//! Snapshots of the docked approval prompt as a person sees it, and its keys.

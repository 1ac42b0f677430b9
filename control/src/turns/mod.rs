//! The turn (§3.3, §5): one activation of one agent in one channel —
//! assemble context, call the model, run tools, post, end. The runner, the
//! calls it makes, the status post, folding, and what it refuses to post.

pub mod assemble;
pub mod calls;
pub mod fold;
pub mod log_fields;
pub mod rejections;
pub mod runner;
pub mod status_post;

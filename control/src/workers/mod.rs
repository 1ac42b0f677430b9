//! The daemon's side of the workers (ARCHITECTURE §4).

pub mod audit;
pub mod capabilities;
pub mod declarations;
pub mod dispatch;
pub mod framework;
pub mod handshake;
pub mod mail;
pub mod pdf;
pub mod pdf_text;
pub mod plugins;
pub mod reach;

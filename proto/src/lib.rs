//! The wire between the control daemon and its workers and plugins
//! (ARCHITECTURE §4): the `Toolset` service every worker serves and the
//! `Storage` service the daemon serves to plugins, the PDF worker's
//! `PdfReader` and the mail worker's `Mailbox`.

/// `collegium.toolset.v1`: Describe, Render, Invoke, Cancel, Health.
pub mod toolset {
    // Generated code: an invoke event is either a progress line or the
    // result (with its output captures), and boxing the larger is prost's
    // choice to make, not ours.
    #[allow(clippy::large_enum_variant)]
    pub mod v1 {
        tonic::include_proto!("collegium.toolset.v1");
    }
}

/// `collegium.storage.v1`: namespaced records for plugins (§3.14).
pub mod storage {
    pub mod v1 {
        tonic::include_proto!("collegium.storage.v1");
    }
}

/// `collegium.pdf.v1`: the PDF worker's Describe, PdfText, Health (§3.4).
pub mod pdf {
    pub mod v1 {
        tonic::include_proto!("collegium.pdf.v1");
    }
}

/// `collegium.mail.v1`: the mail worker's Poll, MarkSeen, Check for the
/// daemon (§3.13, §4.2).
pub mod mail {
    pub mod v1 {
        tonic::include_proto!("collegium.mail.v1");
    }
}

/// The protocol version this build speaks, as carried in `Describe`.
pub const PROTOCOL_VERSION: u32 = toolset::v1::ProtocolVersion::ProtocolVersion1 as u32;

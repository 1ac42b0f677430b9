//! Compiles the `.proto` files with protox, a pure-Rust protobuf compiler, so the
//! build never needs a system `protoc` (ARCHITECTURE §2, §5).

use std::error::Error;

const PROTOS: &[&str] = &[
    "proto/collegium/toolset/v1/toolset.proto",
    "proto/collegium/storage/v1/storage.proto",
    "proto/collegium/pdf/v1/pdf.proto",
    "proto/collegium/mail/v1/mail.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}

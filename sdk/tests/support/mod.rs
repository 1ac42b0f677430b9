#![allow(dead_code)]
pub mod memory;

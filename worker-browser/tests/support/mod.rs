// Each test binary uses part of the scripted site.
#![allow(dead_code)]

pub mod site;
